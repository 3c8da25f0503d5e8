import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { agentTools, FFMPEG, FFPROBE, serveFiles, withDisplayMatrix, type MediaServer } from './helpers/media.js';
import type { FfprobeStream } from '@shorts/common/media/ffprobe';
import { ffprobe } from '../node-agent/src/media/ffmpeg.js';
import { sampleFrames } from '../node-agent/src/reframe/frames.js';
import { displayMatrixOf, mirrorFilterOf } from '../node-agent/src/media/orientation.js';
import type { Parsed } from './helpers/parsed.js';

// More of the media matrix (docs/media.md): display matrices that mirror the picture, run by an
// agent on the bundled 2018 ffmpeg, which reads only the rotation from the matrix (ffmpeg 5+'s
// autorotate flips too: the agent must show the picture as a player does with either).

const run = promisify(execFile);
let cluster: TestCluster;
let media: MediaServer;
let dir: string;

const SECONDS = 3;
const SHORT = { title: 'More', start: 0.5, end: 2.5 };
const OUT = { width: 360, height: 640 };

/**
 * The picture a player must show (portrait, as the short): grey, a white bar at the top centre and a
 * white box on the left, so that upside down and mirrored both show.
 */
const UPRIGHT =
  `color=c=0x505050:s=${OUT.width}x${OUT.height}:r=30:d=${SECONDS},` +
  `drawbox=x=iw*0.42:y=ih*0.04:w=iw*0.16:h=ih*0.1:color=white:t=fill,` +
  `drawbox=x=iw*0.08:y=ih*0.45:w=iw*0.2:h=ih*0.1:color=white:t=fill`;

/** The display matrices that mirror: what stores the upright picture's frames, and the matrix (a, b, c, d). */
const MIRRORS = [
  { name: 'mirrored left to right (a front camera export)', store: 'hflip', matrix: [-1, 0, 0, 1] },
  { name: 'mirrored top to bottom', store: 'vflip', matrix: [1, 0, 0, -1] },
  { name: 'turned a quarter and mirrored (transposed)', store: 'transpose=cclock_flip', matrix: [0, 1, 1, 0] },
  { name: 'turned three quarters and mirrored', store: 'transpose=clock_flip', matrix: [0, -1, -1, 0] },
] as const;

const files = new Map<string, string>();

test.before(async () => {
  cluster = await startCluster('media_matrix_more');
  dir = path.join(cluster.dataDir, 'more');
  await mkdir(dir, { recursive: true });
  const served: Record<string, string> = {};
  for (const [i, m] of MIRRORS.entries()) {
    const stored = path.join(dir, `stored-${i}.mp4`);
    await run(
      FFMPEG,
      ['-y', '-v', 'error', '-f', 'lavfi', '-i', UPRIGHT, '-vf', m.store, '-c:v', 'libx264', '-preset', 'ultrafast'].concat([
        '-pix_fmt',
        'yuv420p',
        stored,
      ]),
    );
    const name = `mirror-${i}.mp4`;
    served[name] = path.join(dir, name);
    await withDisplayMatrix(stored, served[name], m.matrix);
    files.set(m.name, name);
  }
  // A screen recording's sound track of zeros, and a picture without any sound track.
  const picture = ['-y', '-v', 'error', '-f', 'lavfi', '-i', UPRIGHT];
  const x264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'];
  served['silent-track.mp4'] = path.join(dir, 'silent-track.mp4');
  await run(FFMPEG, [
    ...picture,
    '-f',
    'lavfi',
    '-i',
    `anullsrc=r=48000:cl=stereo`,
    '-t',
    String(SECONDS),
    ...x264,
    '-c:a',
    'aac',
    served['silent-track.mp4'],
  ]);
  served['no-track.mp4'] = path.join(dir, 'no-track.mp4');
  await run(FFMPEG, [...picture, ...x264, '-an', served['no-track.mp4']]);
  // Interlaced (fields top first, 30 frames of two fields a second) from 60 fps of a white bar
  // racing across black: every frame's two fields show the bar 8 px apart, a comb on its edges.
  served['interlaced.mp4'] = path.join(dir, 'interlaced.mp4');
  await run(FFMPEG, [
    ...['-y', '-v', 'error', '-f', 'lavfi', '-i', `color=black:s=${OUT.width}x${OUT.height}:r=60:d=${SECONDS}`],
    ...['-f', 'lavfi', '-i', `color=white:s=40x${OUT.height}:r=60:d=${SECONDS}`],
    ...['-filter_complex', `[0:v][1:v]overlay=x='mod(t*480,${OUT.width - 40})':y=0,interlace=scan=tff`],
    ...[...x264, '-flags', '+ildct+ilme', '-x264opts', 'tff=1', '-an', served['interlaced.mp4']],
  ]);
  media = await serveFiles(served);
  // The bundled ffmpeg and ffprobe: the old build that reads only the rotation.
  await cluster.startAgent({ FFMPEG_PATH: FFMPEG, FFPROBE_PATH: FFPROBE });
});

test.after.always(async () => {
  await media?.close();
  await cluster?.close();
});

async function renderThrough(file: string): Promise<{ file: string; job: Parsed }> {
  const { key } = await cluster.org({ plan: 'pro', credits: 10 });
  const created = await cluster.api('POST', '/api/jobs', {
    key,
    body: { functionName: 'VideoShorts', fileUrl: media.url(file), options: { predefinedShorts: [SHORT] } },
  });
  if (created.status !== 201) throw new Error(`job refused: ${JSON.stringify(created.body)}`);
  const job = await cluster.settledJob(key, created.body.id, { timeoutMs: 300_000 });
  if (job.status !== 'COMPLETED') throw new Error(`job failed: ${job.message}`);
  const render = await cluster.api('POST', '/api/render', { key, body: { id: created.body.id, target: 0, size: OUT } });
  if (render.status !== 201) throw new Error(`render refused: ${JSON.stringify(render.body)}`);
  const done = await waitFor(
    async () => {
      const r = await cluster.api('GET', `/api/render/${render.body.renderId}`, { key });
      return r.body.type === 'done' || r.body.type === 'error' ? r.body : undefined;
    },
    300_000,
    'render',
  );
  if (done.type !== 'done') throw new Error(`render failed: ${JSON.stringify(done)}`);
  const out = path.join(dir, `${render.body.renderId}.mp4`);
  await writeFile(out, Buffer.from(await (await fetch(done.url)).arrayBuffer()));
  return { file: out, job };
}

/** The luma plane of the frame `at` seconds into `file`, at OUT's size. */
async function lumaAt(file: string, at: number, ffmpegPath = FFMPEG): Promise<Buffer> {
  const { stdout } = await run(
    ffmpegPath,
    ['-v', 'error', '-ss', String(at), '-i', file, '-frames:v', '1', '-vf', `scale=${OUT.width}:${OUT.height}`, '-f', 'rawvideo'].concat([
      '-pix_fmt',
      'gray',
      'pipe:1',
    ]),
    { encoding: 'buffer', maxBuffer: 16 * 1024 * 1024 },
  );
  return stdout;
}

/** Mean of a region given in fractions of the frame. */
function meanOf(
  plane: Buffer | Uint8Array,
  width: number,
  height: number,
  x0: number,
  x1: number,
  y0: number,
  y1: number,
  step = 1,
): number {
  let sum = 0;
  let n = 0;
  for (let y = Math.round(y0 * height); y < Math.round(y1 * height); y++)
    for (let x = Math.round(x0 * width); x < Math.round(x1 * width); x++) {
      sum += plane[(y * width + x) * step]!;
      n++;
    }
  return sum / n;
}

/** Where the markers are: the bar on top (not at the bottom), the box on the left (not the right). */
function markers(plane: Buffer | Uint8Array, width: number, height: number, step = 1) {
  const m = (x0: number, x1: number, y0: number, y1: number) => meanOf(plane, width, height, x0, x1, y0, y1, step);
  return {
    barTop: m(0.44, 0.56, 0.05, 0.13),
    barBottom: m(0.44, 0.56, 0.87, 0.95),
    boxLeft: m(0.1, 0.26, 0.46, 0.54),
    boxRight: m(0.74, 0.9, 0.46, 0.54),
  };
}

const asShown = (at: ReturnType<typeof markers>) =>
  at.barTop > 200 && at.barBottom < 120 && at.boxLeft > 200 && at.boxRight < 120 ? true : JSON.stringify(at);

for (const m of MIRRORS) {
  test.serial(`display matrix ${m.name}: probed at its display size, shown as a player does`, async (t) => {
    const file = path.join(dir, files.get(m.name)!);
    // What a player shows: ffmpeg 5+'s autorotate (it flips as well as turns) shows the markers in place.
    const tools = agentTools();
    if (tools.source !== 'bundled')
      t.is(asShown(markers(await lumaAt(file, 1, tools.ffmpegPath), OUT.width, OUT.height)), true, 'ffmpeg 5+');
    const info = await ffprobe(file, { ffprobePath: FFPROBE });
    t.is(info.width, OUT.width);
    t.is(info.height, OUT.height);
    // The frames the face detector sees, decoded by the bundled ffmpeg.
    const size = { width: 90, height: 160 };
    let seen = 0;
    for await (const frame of sampleFrames(FFMPEG, file, { start: 1, end: 1.5 }, { fps: 2, size, orient: info.colour.orient ?? null })) {
      t.is(asShown(markers(frame.image.data, size.width, size.height, 3)), true, `detector frame at ${frame.time} s`);
      seen++;
    }
    t.true(seen >= 1);
  });

  test.serial(`display matrix ${m.name}: through the API, the short shows the picture as a player does`, async (t) => {
    const { file } = await renderThrough(files.get(m.name)!);
    const { stdout } = await run(FFPROBE, ['-v', 'error', '-select_streams', 'v:0', '-show_streams', '-of', 'json', file]);
    const [video] = (JSON.parse(stdout) as { streams: FfprobeStream[] }).streams;
    t.like(video, { width: OUT.width, height: OUT.height });
    // The frames are shown as they are: no matrix of the source's left in the short for a player to apply again.
    t.is(mirrorFilterOf(video), null);
    t.deepEqual(displayMatrixOf(video)?.slice(0, 5) ?? [65536, 0, 0, 0, 65536], [65536, 0, 0, 0, 65536]);
    t.is(asShown(markers(await lumaAt(file, 1), OUT.width, OUT.height)), true);
  });
}

for (const [name, file, note] of [
  ['a sound track of silence (a screen recorder without a microphone)', 'silent-track.mp4', /audio track is silent/],
  ['no sound track', 'no-track.mp4', /no audio track/],
] as const) {
  test.serial(`${name}: the job completes, says why there are no words, and the short has a silent stereo AAC track`, async (t) => {
    const { file: short, job } = await renderThrough(file);
    t.true(
      (job.data?.notes ?? []).some((n: string) => note.test(n)),
      JSON.stringify(job.data?.notes),
    );
    const { stdout } = await run(FFPROBE, ['-v', 'error', '-show_streams', '-show_format', '-of', 'json', short]);
    const probed = JSON.parse(stdout) as { streams: FfprobeStream[]; format: { duration: string } };
    const audio = probed.streams.filter((s) => s.codec_type === 'audio');
    t.is(audio.length, 1);
    t.like(audio[0], { codec_name: 'aac', channels: 2, sample_rate: '48000' });
    const length = SHORT.end - SHORT.start;
    t.true(Math.abs(Number(audio[0]!.duration) - length) <= 0.1, `sound of ${audio[0]!.duration} s, the short ${length} s`);
    t.true(Math.abs(Number(probed.format.duration) - length) <= 0.1, `${probed.format.duration} s`);
    const { stdout: pcm } = await run(FFMPEG, ['-v', 'error', '-i', short, '-map', '0:a:0', '-f', 's16le', 'pipe:1'], {
      encoding: 'buffer',
      maxBuffer: 16 * 1024 * 1024,
    });
    const samples = new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length / 2);
    t.true(samples.length >= 2 * 48000 * (length - 0.1), `${samples.length} samples`);
    t.true(
      samples.every((v) => Math.abs(v) <= 1),
      'silence',
    );
  });
}

/**
 * Combing: how much more a line differs from the next (the other field) than from the one after
 * (its own field), mean absolute luma over the frame. A progressive picture of vertical edges: 0.
 */
function combOf(plane: Uint8Array, width: number, height: number): number {
  let adjacent = 0;
  let sameField = 0;
  for (let y = 0; y + 2 < height; y++)
    for (let x = 0; x < width; x++) {
      const p = plane[y * width + x]!;
      adjacent += Math.abs(p - plane[(y + 1) * width + x]!);
      sameField += Math.abs(p - plane[(y + 2) * width + x]!);
    }
  return (adjacent - sameField) / (width * (height - 2));
}

/** The comb of every frame of `file`'s stretch [from, from + 1 s), decoded as stored. */
async function combs(file: string, from: number): Promise<number[]> {
  const { stdout } = await run(
    FFMPEG,
    ['-v', 'error', '-ss', String(from), '-t', '1', '-i', file, '-f', 'rawvideo', '-pix_fmt', 'gray', 'pipe:1'],
    {
      encoding: 'buffer',
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const size = OUT.width * OUT.height;
  return Array.from({ length: Math.floor(stdout.length / size) }, (_, i) =>
    combOf(stdout.subarray(i * size, (i + 1) * size), OUT.width, OUT.height),
  );
}

test.serial('an interlaced source (fields top first, fast motion): the short shows no combing', async (t) => {
  const source = path.join(dir, 'interlaced.mp4');
  const info = await ffprobe(source, { ffprobePath: FFPROBE });
  t.true(info.interlaced, 'the source is flagged as interlaced');
  const before = await combs(source, 1);
  t.true(Math.min(...before) > 5, `the source combs: ${before.map((c) => c.toFixed(1)).join(' ')}`);
  const { file } = await renderThrough('interlaced.mp4');
  // The same picture size as the source (no scaling smears the comb away): the short's frames.
  const after = await combs(file, 0.2);
  t.true(after.length >= 20, `${after.length} frames`);
  t.true(Math.max(...after) < 1.5, `the short combs: ${after.map((c) => c.toFixed(1)).join(' ')}`);
});
