import test from 'ava';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { FakeAgent } from './helpers/fake-agent.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { FFMPEG, makeHalvesVideo } from './helpers/media.js';
import { createUser } from '../coordinator/src/tenancy/tenancy.js';
import { DEFAULT_DIRECTOR } from '@shorts/common/reframe/director';
import type { ShortDetections } from '@shorts/common/reframe/types';
import { planReframe } from '@shorts/common/reframe/camera';
import type { Parsed } from './helpers/parsed.js';

// The crop path as data: served under `reframe` in both retrieve forms and described in the OpenAPI
// document; a render with other director settings plans it again from the stored detections.

const run = promisify(execFile);
let cluster: TestCluster;
let source: string;

// A 1280x720 source: the left half red, the right half blue. Two "people" whose face boxes sit in
// each half take turns; the picture has no real face, so a detection pass would find nobody: only a
// path planned from the stored detections can show these halves the way the checks below expect.
const LEFT = { x: 250, y: 250, width: 120, height: 150 };
const RIGHT = { x: 910, y: 250, width: 120, height: 150 };
const detections: ShortDetections = (() => {
  const times = Array.from({ length: 40 }, (_, i) => i / 10);
  return {
    version: 1,
    sourceWidth: 1280,
    sourceHeight: 720,
    start: 0,
    end: 4,
    sampleFps: 10,
    speech: [{ start: 0.1, end: 3.9 }],
    tracks: [
      { id: 1, samples: times.map((time) => ({ time, box: LEFT, score: 0.95, mouthActivity: time < 2 ? 0.3 : 0 })) },
      { id: 2, samples: times.map((time) => ({ time, box: RIGHT, score: 0.95, mouthActivity: time >= 2 ? 0.3 : 0 })) },
    ],
    turns: [
      { start: 0.1, end: 1.9, trackId: 1 },
      { start: 2.1, end: 3.9, trackId: 2 },
    ],
  };
})();
const OUTPUT = { width: 720, height: 1280 };
const stored = planReframe(detections, DEFAULT_DIRECTOR, OUTPUT);

test.before(async () => {
  cluster = await startCluster('reframe_api');
  source = path.join(cluster.dataDir, 'halves.mp4');
  await makeHalvesVideo(source, { seconds: 4 });
});
test.after.always(() => cluster?.close());

async function jobWithPath(organizationId: string): Promise<string> {
  return insertCompletedJob(cluster.app, {
    organizationId,
    sourcePath: source,
    width: 1280,
    height: 720,
    words: [
      { text: 'left', start: 0.5, end: 1 },
      { text: 'right', start: 2.5, end: 3 },
    ],
    shorts: [{ startTime: 0, endTime: 4, title: 'Both', reframe: stored, detections }],
    reframePlan: { director: { ...DEFAULT_DIRECTOR }, output: OUTPUT },
  });
}

test('each short carries its crop path in both retrieve forms; the detections are not served', async (t) => {
  const { org, key } = await cluster.org();
  const user = await createUser(cluster.app.db, { email: `reframe-${org.id}@example.com`, organizationId: org.id });
  const bearer = { authorization: `Bearer ${await cluster.app.signer.issue(user.id)}` };
  const id = await jobWithPath(org.id);

  const keyForm = await cluster.api('GET', `/api/jobs/${id}`, { key });
  t.is(keyForm.status, 200);
  t.deepEqual(keyForm.body.data.shorts[0].reframe, stored);
  const bearerForm = await cluster.api('GET', `/api/jobs/${id}?organizationId=${org.id}`, { headers: bearer });
  t.is(bearerForm.status, 200);
  const reframe = bearerForm.body.data.shorts[0].reframe;
  t.deepEqual(reframe, stored);
  t.like(reframe, { sourceWidth: 1280, sourceHeight: 720 });
  t.deepEqual(
    reframe.segments.map((s: { start: number; layout: string; tracks: number[] }) => [s.start, s.layout, s.tracks]),
    [
      [0, 'single', [1]],
      [2, 'single', [2]],
    ],
  ); // the cut where the second mouth starts moving
  for (const body of [keyForm.body, bearerForm.body]) {
    const text = JSON.stringify(body);
    t.false(text.includes('mouthActivity') || text.includes('"turns"') || text.includes('reframePlan'), 'detections stay private');
  }
  // The quality figure in both forms: of 3.8 s of speech, 0.1-1.9 and 2.1-3.9 name a face (3.6 s), a
  // face is in the window throughout, and with every turn sure the least sure is the first.
  for (const body of [keyForm.body, bearerForm.body]) {
    t.deepEqual(body.data.shorts[0].reframe.quality, {
      speakerOnScreenShare: 0.947,
      faceInWindowShare: 1,
      lowestConfidenceSpan: { start: 0.1, end: 1.9, confidence: 1 },
    });
  }
});

test.serial(
  "a short's quality as an agent reports it is stored, served in both retrieve forms and observed once per short with a path",
  async (t) => {
    // Serial, so it runs before the render test's real agent could take this analysis.
    const agent = await new FakeAgent(cluster.app.grpcAddress, undefined, 'quality').register(['analyze-video']);
    t.teardown(() => agent.close());
    const { org, key } = await cluster.org({ plan: 'pro', credits: 10 });
    const user = await createUser(cluster.app.db, { email: `quality-${org.id}@example.com`, organizationId: org.id });
    const bearer = { authorization: `Bearer ${await cluster.app.signer.issue(user.id)}` };
    const created = await cluster.api('POST', '/api/jobs', {
      key,
      body: { functionName: 'VideoShorts', fileUrl: 'https://example.com/talk.mp4' },
    });
    t.is(created.status, 201, JSON.stringify(created.body));
    const task = await waitFor(() => agent.lease(1000), 15_000, 'the analysis leased');
    t.is(task.type, 'analyze-video');
    const upload = await agent.uploadUrl(task, 'source.mp4');
    const bytes = await readFile(source);
    const put = await fetch(upload.url, {
      method: 'PUT',
      body: new Uint8Array(bytes),
      headers: { 'content-type': 'application/octet-stream' },
    });
    t.is(put.status, 201);
    // A reported quality unlike the one this path would give: what is stored is what the agent said.
    const quality = {
      speakerOnScreenShare: 0.42,
      faceInWindowShare: 0.85,
      lowestConfidenceSpan: { start: 2.1, end: 3.9, confidence: 0.3 },
    };
    const short = { reason: null, startTime: 0, endTime: 4, startId: null, endId: null, text: '', crop: null };
    await agent.complete(task.task_id, task.lease_token, {
      durationSec: 4,
      downloadBytes: bytes.length,
      source: {
        name: 'talk.mp4',
        objectKey: upload.object_key,
        sizeBytes: bytes.length,
        contentType: 'video/mp4',
        width: 1280,
        height: 720,
      },
      transcript: { language: 'en', text: '', words: [], backend: 'test' },
      shorts: [
        { ...short, title: 'Framed', reframe: { ...stored, quality }, detections },
        { ...short, title: 'Centre crop', reframe: null, detections: null },
      ],
      reframePlan: { director: { ...DEFAULT_DIRECTOR }, output: OUTPUT },
    });
    const keyForm = await cluster.api('GET', `/api/jobs/${created.body.id}`, { key });
    t.is(keyForm.body.status, 'COMPLETED', JSON.stringify(keyForm.body));
    const bearerForm = await cluster.api('GET', `/api/jobs/${created.body.id}?organizationId=${org.id}`, { headers: bearer });
    for (const body of [keyForm.body, bearerForm.body]) {
      t.deepEqual(body.data.shorts[0].reframe.quality, quality);
      t.is(body.data.shorts[1].reframe, null);
    }

    // One observation each, from the short with a path, once the completion has committed.
    const sample = (text: string, name: string) => Number(text.match(new RegExp(`^${name} (\\S+)$`, 'm'))?.[1]);
    const text = await waitFor(
      async () => {
        const body = await (await fetch(`${cluster.app.httpUrl}/metrics`)).text();
        return sample(body, 'shorts_reframe_face_in_window_ratio_count') >= 1 ? body : undefined;
      },
      10_000,
      'the quality observed',
    );
    t.is(sample(text, 'shorts_reframe_speaker_on_screen_ratio_count'), 1);
    t.is(sample(text, 'shorts_reframe_speaker_on_screen_ratio_sum'), 0.42);
    t.is(sample(text, 'shorts_reframe_speaker_on_screen_ratio_bucket\\{le="0.4"\\}'), 0);
    t.is(sample(text, 'shorts_reframe_speaker_on_screen_ratio_bucket\\{le="0.5"\\}'), 1);
    t.is(sample(text, 'shorts_reframe_face_in_window_ratio_count'), 1);
    t.is(sample(text, 'shorts_reframe_face_in_window_ratio_bucket\\{le="0.8"\\}'), 0);
    t.is(sample(text, 'shorts_reframe_face_in_window_ratio_bucket\\{le="0.9"\\}'), 1);
  },
);

/** The document with its `$ref`s (named component schemas) replaced by what they name. */
function dereferenced(doc: Parsed): Parsed {
  const resolve = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(resolve);
    if (!node || typeof node !== 'object') return node;
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === 'string' && ref.startsWith('#/')) {
      const target = ref
        .slice(2)
        .split('/')
        .reduce((at: Parsed, key) => at?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
      return resolve(target);
    }
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, resolve(v)]));
  };
  return resolve(doc) as Parsed;
}

test('the OpenAPI document describes reframe on the job retrieve route', async (t) => {
  const doc = dereferenced((await cluster.api('GET', '/openapi.json')).body);
  const schema = doc.paths['/api/jobs/{jobId}'].get.responses['200'].content['application/json'].schema;
  const forms = schema.anyOf ?? schema.oneOf;
  t.is(forms.length, 2);
  for (const form of forms) {
    const short = form.properties.data.properties.shorts.items;
    const reframe = short.properties.reframe;
    const object = reframe.anyOf ? reframe.anyOf.find((s: { type?: string }) => s.type === 'object') : reframe;
    t.deepEqual(Object.keys(object.properties).sort(), [
      'keyframes',
      'overrides',
      'quality',
      'segments',
      'shots',
      'sourceHeight',
      'sourceWidth',
    ]);
    const key = object.properties.keyframes.items;
    t.deepEqual(Object.keys(key.properties).sort(), ['height', 'panels', 'time', 'width', 'x', 'y']);
    t.deepEqual(object.properties.segments.items.properties.layout.enum, ['single', 'split', 'fit', 'stack']);
    const shot = object.properties.shots.items;
    t.deepEqual(Object.keys(shot.properties).sort(), ['end', 'start', 'transition', 'transitionEnd']);
    t.deepEqual(shot.properties.transition.enum, ['start', 'cut', 'dissolve']);
    const quality = object.properties.quality;
    t.deepEqual(Object.keys(quality.properties).sort(), ['faceInWindowShare', 'lowestConfidenceSpan', 'speakerOnScreenShare']);
    t.like(quality.properties.speakerOnScreenShare, { type: 'number', minimum: 0, maximum: 1 });
    t.regex(quality.properties.speakerOnScreenShare.description, /speech time/);
    t.regex(quality.description, /absent on paths planned before/);
  }
});

/** The colour at a point of a frame of a rendered file (RGB). */
async function colourAt(file: string, time: number, w: number, h: number, x: number, y: number): Promise<[number, number, number]> {
  const { stdout } = await run(
    FFMPEG,
    ['-v', 'error', '-ss', String(time), '-i', file, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'],
    { encoding: 'buffer', maxBuffer: 1 << 24 },
  );
  t0(stdout.length === w * h * 3, `frame of ${stdout.length} bytes`);
  const i = (y * w + x) * 3;
  return [stdout[i]!, stdout[i + 1]!, stdout[i + 2]!];
}
function t0(ok: boolean, message: string) {
  if (!ok) throw new Error(message);
}
const red = ([r, g, b]: number[]) => r! > 180 && g! < 80 && b! < 80;
const blue = ([r, g, b]: number[]) => b! > 180 && r! < 80 && g! < 80;

async function render(key: string, jobId: string, options: Record<string, unknown>): Promise<{ file: string; spec: Parsed }> {
  const created = await cluster.api('POST', '/api/render', {
    key,
    body: { id: jobId, target: 0, size: { width: 360, height: 640 }, options },
  });
  if (created.status !== 201) throw new Error(JSON.stringify(created.body));
  const done = await waitFor(
    async () => {
      const r = await cluster.api('GET', `/api/render/${created.body.renderId}`, { key });
      if (r.body.type === 'error') throw new Error(r.body.message);
      return r.body.type === 'done' ? r.body : undefined;
    },
    120_000,
    'render done',
  );
  const file = path.join(cluster.dataDir, `${created.body.renderId}.mp4`);
  const res = await fetch(done.url);
  await import('node:fs/promises').then(async (fs) => fs.writeFile(file, Buffer.from(await res.arrayBuffer())));
  const row = await cluster.app.db.one<{ spec: Parsed }>(
    `SELECT payload AS spec FROM tasks WHERE subject_id = $1 AND type = 'render-short'`,
    [created.body.renderId],
  );
  return { file, spec: row!.spec };
}

test('a render follows the stored path; with other director settings the agent plans it again from the detections', async (t) => {
  await cluster.startAgent();
  const { org, key } = await cluster.org({ plan: 'pro' });
  const id = await jobWithPath(org.id);

  // Default settings: the stored path, one person at a time (left = red first, right = blue after the turn).
  const plain = await render(key, id, {});
  t.is(plain.spec.recompute, null, 'the stored path is reused');
  t.true(
    red(await colourAt(plain.file, 1, 360, 640, 180, 160)) && red(await colourAt(plain.file, 1, 360, 640, 180, 480)),
    'first speaker fills the frame',
  );
  t.true(
    blue(await colourAt(plain.file, 3, 360, 640, 180, 160)) && blue(await colourAt(plain.file, 3, 360, 640, 180, 480)),
    'cut to the second speaker',
  );

  // Two speakers allowed: split screen, the speaker on top, planned by the agent (no detection pass:
  // the source has no face a detector could find).
  const split = await render(key, id, { director: { intelligence: { maxSpeakersToFocus: 2 } } });
  t.deepEqual(split.spec.recompute.director, { facePaddingFactor: 1, maxSpeakersToFocus: 2 });
  t.is(split.spec.recompute.detections.tracks.length, 2);
  t.true(red(await colourAt(split.file, 1, 360, 640, 180, 160)), 'speaker (left, red) on top');
  t.true(blue(await colourAt(split.file, 1, 360, 640, 180, 480)), 'listener (right, blue) below');
  t.true(blue(await colourAt(split.file, 3, 360, 640, 180, 160)), 'after the turn the right speaker is on top');
  t.true(red(await colourAt(split.file, 3, 360, 640, 180, 480)));
});
