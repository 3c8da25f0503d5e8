import test from 'ava';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { FFMPEG, makeTestVideo } from './helpers/media.js';
import { planReframe } from '@shorts/common/reframe/camera';
import { DEFAULT_DIRECTOR } from '@shorts/common/reframe/director';
import type { ShortDetections } from '@shorts/common/reframe/types';

// The studio's caption position control sends the `position` style item (top / center / bottom);
// a real agent renders it: the caption's bright pixels sit in the band the control names.

const run = promisify(execFile);
let cluster: TestCluster;
let source: string;
const WORDS = [
  { text: 'HELLO', start: 0.5, end: 1.5 },
  { text: 'WORLD', start: 1.5, end: 2.5 },
];
const W = 360;
const H = 640;

test.before(async () => {
  cluster = await startCluster('render_caption_position');
  // Dark grey, so white caption letters are the only bright pixels.
  source = path.join(cluster.dataDir, 'dark.mp4');
  await makeTestVideo(source, { colour: '0x303030', width: 1280, height: 720, seconds: 3, toneHz: 300 });
  await cluster.startAgent();
});
test.after.always(() => cluster?.close());

/** Bright pixels in the top, middle and bottom thirds of the rendered frame at t. */
async function brightByThird(file: string, t: number): Promise<[number, number, number]> {
  const { stdout } = await run(
    FFMPEG,
    ['-v', 'error', '-ss', String(t), '-i', file, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'gray', '-'],
    { encoding: 'buffer', maxBuffer: 16 * 1024 * 1024 },
  );
  if (stdout.length !== W * H) throw new Error(`frame size ${stdout.length}`);
  const thirds: [number, number, number] = [0, 0, 0];
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) if (stdout[y * W + x]! > 200) thirds[Math.min(2, Math.floor((y * 3) / H))]++;
  return thirds;
}

// A short whose speaker sits low in the picture: the face box (source pixels) in the lower third of
// the 720-px-high frame, so in the lower third of the 9:16 window that follows it.
const LOW_FACE = { x: 560, y: 500, width: 140, height: 170 };
const lowFaceShort = () => {
  const times = Array.from({ length: 30 }, (_, i) => i / 10);
  const detections: ShortDetections = {
    version: 1,
    sourceWidth: 1280,
    sourceHeight: 720,
    start: 0,
    end: 3,
    sampleFps: 10,
    speech: [{ start: 0.1, end: 2.9 }],
    tracks: [{ id: 1, samples: times.map((time) => ({ time, box: LOW_FACE, score: 0.95, mouthActivity: 0.3 })) }],
    turns: [{ start: 0.1, end: 2.9, trackId: 1 }],
  };
  const output = { width: 720, height: 1280 };
  return {
    reframe: planReframe(detections, DEFAULT_DIRECTOR, output),
    detections,
    reframePlan: { director: { ...DEFAULT_DIRECTOR }, output },
  };
};

async function render(
  style: Array<{ property: string; value: string }> | undefined,
  framed?: ReturnType<typeof lowFaceShort>,
): Promise<[number, number, number]> {
  const { org, key } = await cluster.org({ plan: 'pro' });
  const jobId = await insertCompletedJob(cluster.app, {
    organizationId: org.id,
    sourcePath: source,
    words: WORDS,
    width: 1280,
    height: 720,
    shorts: [{ startTime: 0, endTime: 3, ...(framed ? { reframe: framed.reframe, detections: framed.detections } : {}) }],
    ...(framed ? { reframePlan: framed.reframePlan } : {}),
  });
  const created = await cluster.api('POST', '/api/render', {
    key,
    body: { id: jobId, target: 0, preset: 'DEFAULT', size: { width: W, height: H }, ...(style ? { options: { style } } : {}) },
  });
  if (created.status !== 201) throw new Error(JSON.stringify(created.body));
  const done = await waitFor(
    async () => {
      const r = await cluster.api('GET', `/api/render/${created.body.renderId}`, { key });
      return r.body.type === 'done' || r.body.type === 'error' ? r.body : undefined;
    },
    180_000,
    'render',
  );
  if (done.type !== 'done') throw new Error(JSON.stringify(done));
  const file = path.join(cluster.dataDir, `${created.body.renderId}.mp4`);
  await writeFile(file, Buffer.from(await (await fetch(done.url)).arrayBuffer()));
  return brightByThird(file, 1.0);
}

test('caption position "top" puts the caption text in the top third of the rendered frame', async (t) => {
  const [top, middle, bottom] = await render([{ property: 'position', value: 'top' }]);
  t.true(top > 200, `caption pixels in the top third: ${top}`);
  t.true(middle + bottom < top / 20, `little below it: middle ${middle}, bottom ${bottom}`);
});

test('without a position (and with "bottom", the control\'s default) the caption is in the lower third', async (t) => {
  for (const style of [undefined, [{ property: 'position', value: 'bottom' }]]) {
    const [top, middle, bottom] = await render(style);
    t.true(bottom > 200, `caption pixels in the lower third: ${bottom} (${JSON.stringify(style)})`);
    t.true(top + middle < bottom / 20, `little above it: top ${top}, middle ${middle}`);
  }
});

test('with no position set, captions of a short whose framed face sits in the lower third go to the top third; a set position still wins', async (t) => {
  const [top, middle, bottom] = await render(undefined, lowFaceShort());
  t.true(top > 200, `caption pixels in the top third: ${top}`);
  t.true(middle + bottom < top / 20, `little below it: middle ${middle}, bottom ${bottom}`);
  const asked = await render([{ property: 'position', value: 'bottom' }], lowFaceShort());
  t.true(asked[2] > 200 && asked[0] + asked[1] < asked[2] / 20, `"bottom" asked for stays in the lower third: ${asked}`);
});

test('caption position "center" puts the caption in the middle third', async (t) => {
  const [top, middle, bottom] = await render([{ property: 'position', value: 'center' }]);
  t.true(middle > 200, `caption pixels in the middle third: ${middle}`);
  t.true(top + bottom < middle / 20, `little elsewhere: top ${top}, bottom ${bottom}`);
});

test('a caption position other than top, center/middle or bottom is a 400 naming the item, and nothing is queued', async (t) => {
  const { org, key } = await cluster.org({ plan: 'pro' });
  const jobId = await insertCompletedJob(cluster.app, { organizationId: org.id, words: WORDS, shorts: [{ startTime: 0, endTime: 3 }] });
  const res = await cluster.api('POST', '/api/render', {
    key,
    body: { id: jobId, target: 0, options: { style: [{ property: 'position', value: 'left' }] } },
  });
  t.is(res.status, 400);
  t.regex(res.body.message, /options\.style\[0\].*position.*must be top, center or bottom/);
  const queued = await cluster.app.db.one<{ n: number }>('SELECT count(*)::int AS n FROM renders WHERE job_id = $1', [jobId]);
  t.is(queued!.n, 0);
});

test('the OpenAPI document shows clients the caption position item', async (t) => {
  const doc = (await cluster.api('GET', '/openapi.json')).body;
  const options = doc.paths['/api/render'].post.requestBody.content['application/json'].schema.properties.options;
  t.regex(options.properties.style.description, /`position` "top", "center" \(or "middle"\) or "bottom"/);
  t.deepEqual(options.properties.style.example, [{ property: 'position', value: 'top' }]);
});
