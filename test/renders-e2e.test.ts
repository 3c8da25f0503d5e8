import type { Parsed } from './helpers/parsed.js';
import test from 'ava';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { FFMPEG, FFPROBE, makeTestVideo } from './helpers/media.js';
import { insertFiles } from '../coordinator/src/files/files.js';

// A real agent renders a short of a job end to end: MP4 of the asked size and duration, captions
// on screen while words are spoken, the watermark blended, progress only forward.

const run = promisify(execFile);
let cluster: TestCluster;
let source: string;

// Two words far apart, so frames with and without captions are easy to tell apart.
const WORDS = [
  { text: 'alpha', start: 1.0, end: 1.6 },
  { text: 'bravo', start: 1.6, end: 2.2 },
  { text: 'charlie', start: 3.2, end: 3.8 },
];

test.before(async () => {
  cluster = await startCluster('renders_e2e');
  // A flat mid-grey picture keeps caption and watermark pixels unambiguous.
  source = path.join(cluster.dataDir, 'grey.mp4');
  await makeTestVideo(source, { colour: '0x808080', width: 1280, height: 720, seconds: 5, toneHz: 300 });
  await cluster.startAgent();
});
test.after.always(() => cluster?.close());

async function probe(file: string) {
  const { stdout } = await run(FFPROBE, ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', file]);
  return JSON.parse(stdout);
}

/** RGB pixels of one frame at time t. */
async function frame(file: string, t: number, w: number, h: number): Promise<Buffer> {
  const { stdout } = await run(
    FFMPEG,
    ['-v', 'error', '-ss', String(t), '-i', file, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'],
    { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
  );
  if (stdout.length !== w * h * 3) throw new Error(`frame size ${stdout.length}`);
  return stdout;
}

/** Pixels in a region that are far from the grey background. */
function changed(
  buf: Buffer,
  w: number,
  region: { x0: number; y0: number; x1: number; y1: number },
  pred: (r: number, g: number, b: number) => boolean,
): number {
  let n = 0;
  for (let y = region.y0; y < region.y1; y++)
    for (let x = region.x0; x < region.x1; x++) {
      const i = (y * w + x) * 3;
      if (pred(buf[i]!, buf[i + 1]!, buf[i + 2]!)) n++;
    }
  return n;
}

test('a short renders to a valid MP4 with captions, watermark and monotone progress', async (t) => {
  const { org, key } = await cluster.org({ plan: 'pro' });
  const jobId = await insertCompletedJob(cluster.app, {
    organizationId: org.id,
    sourcePath: source,
    words: WORDS,
    shorts: [{ startTime: 0.5, endTime: 4.5 }],
    width: 1280,
    height: 720,
  });
  // A solid red 200x100 logo, stored as the organization's image.
  const logo = path.join(cluster.dataDir, 'logo.png');
  await writeFile(
    logo,
    await sharp({ create: { width: 200, height: 100, channels: 4, background: { r: 255, g: 0, b: 0, alpha: 1 } } })
      .png()
      .toBuffer(),
  );
  const logoKey = `orgs/${org.id}/logo.png`;
  const { size: logoSize } = await cluster.app.store.put(logoKey, { path: logo });
  const [logoId] = await cluster.app.db.tx((c) =>
    insertFiles(c, [{ organizationId: org.id, name: 'logo.png', type: 'image', sizeBytes: logoSize, objectKey: logoKey }]),
  );

  const created = await cluster.api('POST', '/api/render', {
    key,
    body: {
      id: jobId,
      target: 0,
      preset: 'VIRAL',
      size: { width: 360, height: 640 },
      options: {
        maxWordsInPage: 2,
        waterMark: { fileAppId: logoId, left: '20px', top: '20px', width: '100px', opacity: '1', blendMode: 'normal' },
      },
    },
  });
  t.is(created.status, 201, JSON.stringify(created.body));
  const seen: number[] = [];
  const done = await waitFor(
    async () => {
      const r = await cluster.api('GET', `/api/render/${created.body.renderId}`, { key });
      if (r.body.type === 'progress') seen.push(r.body.progress);
      return r.body.type === 'done' || r.body.type === 'error' ? r.body : undefined;
    },
    180_000,
    'render',
  );
  t.is(done.type, 'done', JSON.stringify(done));
  t.deepEqual(
    seen,
    [...seen].sort((a, b) => a - b),
    'progress never goes back',
  );
  t.true(seen.every((p) => p >= 0 && p <= 1));

  const res = await fetch(done.url);
  t.is(res.status, 200);
  const bytes = Buffer.from(await res.arrayBuffer());
  t.is(bytes.length, done.size);
  const file = path.join(cluster.dataDir, 'out.mp4');
  await writeFile(file, bytes);
  const info = await probe(file);
  const video = info.streams.find((s: { codec_type: string }) => s.codec_type === 'video');
  t.deepEqual([video.codec_name, video.width, video.height], ['h264', 360, 640]);
  t.true(info.streams.some((s: { codec_type: string }) => s.codec_type === 'audio'));
  t.true(Math.abs(Number(info.format.duration) - 4) < 0.15, `duration ${info.format.duration}`);
  // faststart: the moov atom comes before mdat.
  t.true(bytes.indexOf('moov') < bytes.indexOf('mdat'));
  // The agent's log tells an operator what the encode did: how many frames, how fast.
  const encoded = cluster.agents
    .flatMap((a) => a.logs)
    .filter((l) => l.includes('"video encoded"') && l.includes(created.body.renderId))
    .map((l) => JSON.parse(l) as Parsed);
  t.is(encoded.length, 1, 'one encode logged');
  t.true(
    Math.abs(encoded[0]!.frames - Number(video.nb_frames)) <= 1,
    `${encoded[0]!.frames} frames logged, ${video.nb_frames} in the file`,
  );
  t.true(encoded[0]!.fps > 0 && encoded[0]!.seconds > 0, JSON.stringify(encoded[0]));

  // Captions: nothing in the lower half before the first word (0.5 s into the clip); text while
  // "alpha" is spoken (1.0-1.6 s source = 0.5-1.1 s clip), with the active word's green of VIRAL.
  const W = 360;
  const H = 640;
  const lower = { x0: 0, y0: H / 3, x1: W, y1: H };
  const notGrey = (r: number, g: number, b: number) => Math.abs(r - 128) + Math.abs(g - 128) + Math.abs(b - 128) > 90;
  const green = (r: number, g: number, b: number) => g > 170 && r < 140 && b < 140;
  const before = await frame(file, 0.2, W, H);
  const during = await frame(file, 0.8, W, H);
  t.true(changed(before, W, lower, notGrey) < 50, 'no caption before the first word');
  t.true(changed(during, W, lower, notGrey) > 500, 'caption pixels while a word is spoken');
  t.true(changed(during, W, lower, green) > 50, 'the active word in the active colour');

  // Watermark: solid red at (20,20), 100 px wide (50 px high), opacity 1, normal blend.
  const red = (r: number, g: number, b: number) => r > 200 && g < 60 && b < 60;
  t.true(changed(during, W, { x0: 30, y0: 30, x1: 110, y1: 60 }, red) > 2000, 'watermark where it was placed');
  t.is(changed(during, W, { x0: 140, y0: 20, x1: 200, y1: 60 }, red), 0, 'and nowhere else');

  // The render is a file of the organization, with its job, counted in the quota.
  const row = await cluster.app.db.one('SELECT job_id AS "jobId", size_bytes AS size, type FROM files WHERE name = $1', [
    `render-${created.body.renderId}.mp4`,
  ]);
  t.deepEqual(row, { jobId, size: done.size, type: 'video' });
});

// Serial, so it runs first and alone: it kills the agent the other tests then find replaced.
test.serial('an agent lost mid-render: the render is re-leased, done once, stored once', async (t) => {
  const { org, key } = await cluster.org({ plan: 'pro' });
  const long = path.join(cluster.dataDir, 'long.mp4');
  await run(FFMPEG, [
    '-y',
    '-hide_banner',
    '-loglevel',
    'error',
    '-f',
    'lavfi',
    '-i',
    'testsrc2=s=1280x720:r=25:d=40',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=300:duration=40',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-shortest',
    long,
  ]);
  const jobId = await insertCompletedJob(cluster.app, {
    organizationId: org.id,
    sourcePath: long,
    words: WORDS,
    shorts: [{ startTime: 0, endTime: 40 }],
    width: 1280,
    height: 720,
  });
  const doomed = cluster.agents[0]!;
  const created = await cluster.api('POST', '/api/render', { key, body: { id: jobId, target: 0, size: { width: 720, height: 1280 } } });
  t.is(created.status, 201, JSON.stringify(created.body));
  const renderId = created.body.renderId;
  await doomed.waitForLog(/"task stage".*"rendering"/, 60_000);
  const midway = await cluster.api('GET', `/api/render/${renderId}`, { key });
  await doomed.kill('SIGKILL');
  await cluster.startAgent();
  await waitFor(async () => (await cluster.app.queue.tick()) > 0, 20_000, 'lease expiry');
  const seen: number[] = [];
  const done = await waitFor(
    async () => {
      const r = await cluster.api('GET', `/api/render/${renderId}`, { key });
      if (typeof r.body.progress === 'number') seen.push(r.body.progress);
      return r.body.type === 'done' || r.body.type === 'error' ? r.body : undefined;
    },
    240_000,
    'render after the agent was lost',
  );
  t.is(done.type, 'done', JSON.stringify(done));
  t.true(
    seen.every((p) => p >= (midway.body.progress ?? 0)),
    'progress shown to the client never went back',
  );
  const rows = await cluster.app.db.query('SELECT size_bytes AS size FROM files WHERE organization_id = $1 AND name = $2', [
    org.id,
    `render-${renderId}.mp4`,
  ]);
  t.deepEqual(rows, [{ size: done.size }]);
  const bytes = Buffer.from(await (await fetch(done.url)).arrayBuffer());
  t.is(bytes.length, done.size);
  const file = path.join(cluster.dataDir, 'rerendered.mp4');
  await writeFile(file, bytes);
  const info = await probe(file);
  t.true(Math.abs(Number(info.format.duration) - 40) < 0.2, `duration ${info.format.duration}`);
});

test('GIF and WebP watermarks render like a PNG one (their first frame)', async (t) => {
  const { org, key } = await cluster.org({ plan: 'pro' });
  const jobId = await insertCompletedJob(cluster.app, {
    organizationId: org.id,
    sourcePath: source,
    words: WORDS,
    shorts: [{ startTime: 0.5, endTime: 2.5 }],
    width: 1280,
    height: 720,
  });
  const red = sharp({ create: { width: 200, height: 100, channels: 4, background: { r: 255, g: 0, b: 0, alpha: 1 } } });
  for (const [format, bytes] of [
    ['gif', await red.clone().gif().toBuffer()],
    ['webp', await red.clone().webp({ lossless: true }).toBuffer()],
  ] as const) {
    const objectKey = `orgs/${org.id}/logo.${format}`;
    const { size } = await cluster.app.store.put(objectKey, bytes);
    const [fileId] = await cluster.app.db.tx((c) =>
      insertFiles(c, [{ organizationId: org.id, name: `logo.${format}`, type: 'image', sizeBytes: size, objectKey }]),
    );
    const created = await cluster.api('POST', '/api/render', {
      key,
      body: {
        id: jobId,
        target: 0,
        size: { width: 360, height: 640 },
        options: { waterMark: { fileAppId: fileId, left: '20px', top: '20px', width: '100px' } },
      },
    });
    t.is(created.status, 201, JSON.stringify(created.body));
    const done = await waitFor(
      async () => {
        const r = await cluster.api('GET', `/api/render/${created.body.renderId}`, { key });
        return r.body.type === 'done' || r.body.type === 'error' ? r.body : undefined;
      },
      120_000,
      `render with a ${format} watermark`,
    );
    t.is(done.type, 'done', `${format}: ${JSON.stringify(done)}`);
    const file = path.join(cluster.dataDir, `wm-${format}.mp4`);
    await writeFile(file, Buffer.from(await (await fetch(done.url)).arrayBuffer()));
    const pixels = await frame(file, 0.2, 360, 640);
    const isRed = (r: number, g: number, b: number) => r > 200 && g < 60 && b < 60;
    t.true(changed(pixels, 360, { x0: 30, y0: 30, x1: 110, y1: 60 }, isRed) > 2000, `${format} watermark where it was placed`);
  }
});

test('a 431x120 logo at 300px in a non-separable blend mode renders through the API', async (t) => {
  // 431x120 scaled to 300x84 is not exactly proportional: the watermark once came out of the scale
  // with a 3017:3000 sample aspect ratio, and mergeplanes failed every attempt (RENDERING_ERROR).
  const { org, key } = await cluster.org({ plan: 'pro' });
  const jobId = await insertCompletedJob(cluster.app, {
    organizationId: org.id,
    sourcePath: source,
    words: WORDS,
    shorts: [{ startTime: 0.5, endTime: 1.5 }],
    width: 1280,
    height: 720,
  });
  const bytes = await sharp({ create: { width: 431, height: 120, channels: 4, background: { r: 230, g: 30, b: 110, alpha: 1 } } })
    .png()
    .toBuffer();
  const objectKey = `orgs/${org.id}/logo-431x120.png`;
  const { size } = await cluster.app.store.put(objectKey, bytes);
  const [fileId] = await cluster.app.db.tx((c) =>
    insertFiles(c, [{ organizationId: org.id, name: 'logo-431x120.png', type: 'image', sizeBytes: size, objectKey }]),
  );
  const created = await cluster.api('POST', '/api/render', {
    key,
    body: {
      id: jobId,
      target: 0,
      options: { waterMark: { fileAppId: fileId, left: '20px', top: '20px', width: '300px', opacity: '1', blendMode: 'color' } },
    },
  });
  t.is(created.status, 201, JSON.stringify(created.body));
  const done = await waitFor(
    async () => {
      const r = await cluster.api('GET', `/api/render/${created.body.renderId}`, { key });
      return r.body.type === 'done' || r.body.type === 'error' ? r.body : undefined;
    },
    120_000,
    'render with a 431x120 watermark',
  );
  t.is(done.type, 'done', JSON.stringify(done));
  const file = path.join(cluster.dataDir, 'wm-431x120.mp4');
  await writeFile(file, Buffer.from(await (await fetch(done.url)).arrayBuffer()));
  // color: the grey backdrop's luminosity with the logo's hue, pink inside the 300x84 box at (20,20) only.
  const pixels = await frame(file, 0.5, 720, 1280);
  const pink = (r: number, g: number, b: number) => r - g > 40 && b - g > 10;
  t.true(changed(pixels, 720, { x0: 24, y0: 24, x1: 316, y1: 100 }, pink) > 20_000, 'the logo blended where it was placed');
  t.is(changed(pixels, 720, { x0: 340, y0: 20, x1: 700, y1: 110 }, pink), 0, 'and nowhere else');
});

test('a render whose source is gone ends in error with a code', async (t) => {
  const { org, key } = await cluster.org({ plan: 'pro' });
  const jobId = await insertCompletedJob(cluster.app, { organizationId: org.id, words: WORDS, shorts: [{ startTime: 0.5, endTime: 4.5 }] });
  const created = await cluster.api('POST', '/api/render', { key, body: { id: jobId, target: 0 } });
  const done = await waitFor(
    async () => {
      const r = await cluster.api('GET', `/api/render/${created.body.renderId}`, { key });
      return r.body.type === 'done' || r.body.type === 'error' ? r.body : undefined;
    },
    120_000,
    'render',
  );
  t.is(done.type, 'error');
  t.truthy(done.message);
  t.is(done.code, 'SOURCE_MISSING');
});
