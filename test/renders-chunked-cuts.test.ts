import test, { type ExecutionContext } from 'ava';
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import {
  agentTools,
  FFMPEG,
  playerTiming,
  probeJson,
  psnrPerFrame,
  serveFiles,
  withDisplayMatrix,
  type MediaServer,
} from './helpers/media.js';
import { displayMatrixOf } from '../node-agent/src/media/orientation.js';
import { makeSpeech, speechVideo } from './helpers/speech.js';
import { fliteAvailable } from './transcribe-synth.js';
import { prepareRender, type RenderSpec } from '../node-agent/src/media/render-args.js';
import { runFfmpeg } from '../node-agent/src/media/ffmpeg.js';
import { resolveCaptionStyle } from '@shorts/common/render/presets';
import { isBundledFfmpeg } from '@shorts/common/media/tools';
import { showTask } from '../coordinator/src/tasks/operator.js';
import type { RenderShortPayload } from '@shorts/common/tasks/render-short';
import type { JumpCutPlan } from '@shorts/common/render/jump-cuts';
import type { Reframe } from '@shorts/common/reframe/types';

// Shorts with cuts rendered in chunks with the default settings (issue 35): a 30 s two-speaker short
// whose single framing cuts between speakers of different window sizes (a crop path of five pieces),
// captions and a watermark; a short with jump cuts; a short from a variable-frame-rate source; the
// two-speaker short from a front camera's mirrored clip. Each is rendered in one pass on a farm of one
// agent (which never waits for a second), then in chunks on two, and the two files compared: frames,
// timestamps, sound samples, every frame's PSNR against a lossless render within 0.5 dB of the
// one pass's, and the picture (captions, watermark) around every join.

const run = promisify(execFile);
const agentFfmpeg = agentTools().ffmpegPath;
const TOOLS = { flite: fliteAvailable() };
const SIZE = { width: 360, height: 640 };
let cluster: TestCluster;
let logos: MediaServer;
let logoFile: string;
let key: string;

interface Case {
  name: string;
  source: string;
  jobId: string;
  fps: number;
  /** A variable-rate source: the rate the render puts it on. */
  constantRate?: number;
  /** A source whose display matrix mirrors it: the filter that shows it as a player does. */
  orient?: string;
  options: Record<string, unknown>;
  single?: { file: string; renderId: string; captions: string | null };
}
const cases = new Map<string, Case>();

// Speaker A framed wide and panning, speaker B framed close: each cut changes the window's size, so
// each turn is a piece of its own in the graph (common/src/reframe/crop-pieces.ts).
const A = { y: 0, width: 404, height: 720 };
const B = { x: 800, y: 90, width: 304, height: 540 };
const SPEAKERS = { startTime: 1, endTime: 31 };
function speakerPath(): Reframe {
  const keyframes: Reframe['keyframes'] = [];
  const turns = [1, 7, 13, 19, 25, 31];
  for (let i = 0; i < turns.length - 1; i++) {
    const [from, to] = [turns[i]!, turns[i + 1]!];
    if (i % 2 === 0) keyframes.push({ time: from, x: 60, ...A }, { time: to - 0.5, x: 460, ...A });
    else keyframes.push({ time: from, ...B });
  }
  return { sourceWidth: 1280, sourceHeight: 720, keyframes, segments: [{ ...SPEAKERS, start: 1, end: 31, layout: 'single', tracks: [0] }] };
}

test.before(async () => {
  // Cut evenly, at the render's own cuts: where measured speeds would move a cut is the VM's luck,
  // and this compares joins at the cuts the shorts have (render-speeds.test.ts and
  // lease-locality.test.ts cover the speeds).
  cluster = await startCluster('renders_chunked_cuts', { renderChunkBySpeed: false });
  const { org, key: apiKey } = await cluster.org({ plan: 'pro' });
  key = apiKey;
  logoFile = path.join(cluster.dataDir, 'logo.png');
  await sharp({ create: { width: 120, height: 60, channels: 4, background: { r: 230, g: 40, b: 40, alpha: 0.8 } } })
    .png()
    .toFile(logoFile);
  logos = await serveFiles({ 'logo.png': logoFile });
  const waterMark = { waterMarkUrl: logos.url('logo.png'), left: '6%', top: '4%', width: '30%' };

  const speakers = path.join(cluster.dataDir, 'speakers.mp4');
  await run(FFMPEG, [
    ...['-y', '-hide_banner', '-loglevel', 'error'],
    ...['-f', 'lavfi', '-i', 'testsrc2=s=1280x720:r=30:d=32', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=32'],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', speakers],
  ]);
  const words = Array.from({ length: 85 }, (_, i) => ({ text: `word${i}`, start: 1 + i * 0.35, end: 1 + i * 0.35 + 0.3 }));
  cases.set('speakers', {
    name: 'speakers',
    source: speakers,
    fps: 30,
    options: { maxWordsInPage: 2, waterMark },
    jobId: await insertCompletedJob(cluster.app, {
      organizationId: org.id,
      sourcePath: speakers,
      words,
      shorts: [{ ...SPEAKERS, reframe: speakerPath() }],
      width: 1280,
      height: 720,
    }),
  });

  // A phone's clip: frames at 30 fps with some dropped, irregularly (its average rate under its peak).
  const vfr = path.join(cluster.dataDir, 'vfr.mp4');
  await run(FFMPEG, [
    ...['-y', '-hide_banner', '-loglevel', 'error'],
    ...['-f', 'lavfi', '-i', 'testsrc2=s=1280x720:r=30:d=32', '-f', 'lavfi', '-i', 'sine=frequency=330:duration=32'],
    ...['-vf', "select='not(eq(mod(n,5),2))*not(between(mod(n,97),40,52))'", '-vsync', 'vfr'],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', vfr],
  ]);
  cases.set('vfr', {
    name: 'vfr',
    source: vfr,
    fps: 30,
    constantRate: 30,
    options: { maxWordsInPage: 2, waterMark },
    jobId: await insertCompletedJob(cluster.app, {
      organizationId: org.id,
      sourcePath: vfr,
      words,
      shorts: [SPEAKERS],
      width: 1280,
      height: 720,
    }),
  });

  // A front camera's clip: frames stored mirrored, with a display matrix that mirrors them back.
  const stored = path.join(cluster.dataDir, 'mirrored-stored.mp4');
  await run(FFMPEG, [
    ...['-y', '-hide_banner', '-loglevel', 'error'],
    ...['-f', 'lavfi', '-i', 'testsrc2=s=1280x720:r=30:d=32', '-f', 'lavfi', '-i', 'sine=frequency=550:duration=32'],
    ...['-vf', 'hflip', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', stored],
  ]);
  const mirrored = path.join(cluster.dataDir, 'mirrored.mp4');
  await withDisplayMatrix(stored, mirrored, [-1, 0, 0, 1]);
  cases.set('mirrored', {
    name: 'mirrored',
    source: mirrored,
    fps: 30,
    orient: 'hflip',
    options: { maxWordsInPage: 2, waterMark },
    jobId: await insertCompletedJob(cluster.app, {
      organizationId: org.id,
      sourcePath: mirrored,
      words,
      shorts: [SPEAKERS],
      width: 1280,
      height: 720,
    }),
  });

  if (TOOLS.flite) {
    // About 30 s of speech with pauses of 0.6-1.5 s: the silences are cut.
    const talk: Array<string | number> = [];
    const lines = ['we cut the pauses', 'and join what is said', 'on every agent at once', 'so the short is done sooner'];
    for (let i = 0; i < 7; i++) talk.push(...lines[i % lines.length]!.split(' '), [0.6, 1.5, 0.9][i % 3]!);
    const sp = await makeSpeech(path.join(cluster.dataDir, 'talk'), talk);
    const source = await speechVideo(sp.wav, path.join(cluster.dataDir, 'talk.mp4'), sp.durationSec, '1280x720');
    cases.set('jump-cuts', {
      name: 'jump-cuts',
      source,
      fps: 25,
      options: { maxWordsInPage: 2, waterMark, editing: { removeSilences: true } },
      jobId: await insertCompletedJob(cluster.app, {
        organizationId: org.id,
        sourcePath: source,
        words: sp.words,
        shorts: [{ startTime: 0, endTime: Math.floor(sp.durationSec * 10) / 10 }],
        width: 1280,
        height: 720,
        fps: 25,
        durationSec: sp.durationSec,
      }),
    });
  }
  // One render slot per agent, whatever the machine's cores.
  await cluster.startAgent({ MAX_CONCURRENT_TASKS: '1' });
});
test.after.always(async () => {
  await logos?.close();
  await cluster?.close();
});

async function render(c: Case): Promise<{ file: string; renderId: string; captions: string | null; children: number }> {
  const created = await cluster.api('POST', '/api/render', {
    key,
    body: { id: c.jobId, target: 0, preset: 'VIRAL', size: SIZE, options: c.options },
  });
  if (created.status !== 201) throw new Error(JSON.stringify(created.body));
  const renderId = created.body.renderId as string;
  const done = await waitFor(
    async () => {
      const r = await cluster.api('GET', `/api/render/${renderId}`, { key });
      return r.body.type === 'done' || r.body.type === 'error' ? r.body : undefined;
    },
    600_000,
    `render ${renderId}`,
  );
  if (done.type !== 'done') throw new Error(JSON.stringify(done));
  const file = path.join(cluster.dataDir, `${c.name}-${renderId}.mp4`);
  await writeFile(file, Buffer.from(await (await fetch(done.url)).arrayBuffer()));
  const captions = done.captionsUrl ? await (await fetch(done.captionsUrl)).text() : null;
  return { file, renderId, captions, children: (await showTask(cluster.app.db, renderId)).children.length };
}

async function samples(file: string): Promise<Buffer> {
  const { stdout } = await run(FFMPEG, ['-v', 'error', '-i', file, '-map', '0:a:0', '-f', 's16le', '-acodec', 'pcm_s16le', '-'], {
    encoding: 'buffer',
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

/** The frames [from, to) as 8-bit luma planes. */
async function lumaFrames(file: string, from: number, to: number): Promise<Buffer[]> {
  const { stdout } = await run(
    FFMPEG,
    ['-v', 'error', '-i', file, '-vf', `select='between(n,${from},${to - 1})',format=gray`, '-vsync', '0', '-f', 'rawvideo', '-'],
    { encoding: 'buffer', maxBuffer: 256 * 1024 * 1024 },
  );
  const size = SIZE.width * SIZE.height;
  return Array.from({ length: stdout.length / size }, (_, i) => stdout.subarray(i * size, (i + 1) * size));
}

/** The one-pass render's own graph (from its task's payload and result), encoded without loss. */
async function losslessReference(c: Case, renderId: string): Promise<string> {
  const { task } = await showTask(cluster.app.db, renderId);
  const [row] = await cluster.app.db.query<{ payload: RenderShortPayload; result: { jumpCuts?: JumpCutPlan | null } }>(
    `SELECT payload, result FROM tasks WHERE id = $1`,
    [task.id],
  );
  const p = row!.payload;
  const wm = p.options.waterMark!;
  const workDir = path.join(cluster.dataDir, `reference-${c.name}`);
  await mkdir(workDir, { recursive: true });
  const out = path.join(cluster.dataDir, `reference-${c.name}.mkv`);
  const edit = row!.result.jumpCuts ?? null;
  const spec: RenderSpec = {
    sourcePath: c.source,
    startTime: p.startTime,
    endTime: p.endTime,
    words: p.words,
    output: { ...p.output, path: out },
    reframe: p.reframe,
    caption: { style: resolveCaptionStyle(p.captionPreset, p.options.style), maxWordsInPage: p.options.maxWordsInPage ?? 4 },
    watermark: { imagePath: logoFile, left: wm.left, top: wm.top, bottom: wm.bottom, width: wm.width, opacity: 1, blendMode: 'normal' },
    encoder: 'libx264',
    legacyFfmpeg: isBundledFfmpeg(agentFfmpeg),
    workDir,
    sourceWidth: 1280,
    sourceHeight: 720,
    ...(edit ? { edit, sourceFps: c.fps, sourceHasAudio: true } : {}),
    ...(c.constantRate ? { constantRate: c.constantRate } : {}),
    ...(c.orient ? { sourceColour: { transfer: 'sdr', matrix: 'bt709', primaries: 'bt709', peakNits: null, orient: c.orient } } : {}),
  };
  const args = await prepareRender(spec);
  args.splice(args.indexOf('-crf'), 2, '-qp', '0');
  args.splice(args.indexOf('-movflags'), 2);
  args[args.indexOf('mp4')] = 'matroska';
  await runFfmpeg(agentFfmpeg, args, { durationSec: p.endTime - p.startTime });
  return out;
}

async function assertSame(
  t: ExecutionContext,
  c: Case,
  chunked: { file: string; renderId: string; captions: string | null },
): Promise<void> {
  const single = c.single!;
  // The caption script burned in can be read back as from the one pass.
  t.truthy(chunked.captions, 'the chunked render keeps its caption script');
  t.is(chunked.captions, single.captions);
  const [a, b] = await Promise.all([playerTiming(single.file), playerTiming(chunked.file)]);
  t.is(b.framePts.length, a.framePts.length, 'the same number of frames');
  t.deepEqual(b.framePts, a.framePts, 'every frame at the same timestamp');
  t.is(b.video.duration, a.video.duration);
  t.is(b.audio.duration, a.audio.duration);
  t.is(Number(b.audio.start_time) - Number(b.video.start_time), Number(a.audio.start_time) - Number(a.video.start_time), 'A/V offset');
  t.true((await samples(chunked.file)).equals(await samples(single.file)), 'the same sound, sample for sample');

  const reference = await losslessReference(c, single.renderId);
  const [psnrSingle, psnrChunked] = await Promise.all([
    psnrPerFrame(single.file, reference, path.join(cluster.dataDir, `${c.name}-single.psnr`)),
    psnrPerFrame(chunked.file, reference, path.join(cluster.dataDir, `${c.name}-chunked.psnr`)),
  ]);
  t.is(psnrChunked.length, a.framePts.length);
  const worst = psnrChunked.map((p, i) => ({ frame: i, diff: Math.abs(p - psnrSingle[i]!) })).sort((x, y) => y.diff - x.diff)[0]!;
  t.true(worst.diff <= 0.5, `frame ${worst.frame}: PSNR ${psnrChunked[worst.frame]} dB, the one pass's ${psnrSingle[worst.frame]} dB`);

  // Around each join: the picture, band by band (the captions, the watermark, the crop), as in the one
  // pass; a caption early, late or missing on either side of a join shows as a band far apart.
  const { children } = await showTask(cluster.app.db, chunked.renderId);
  const frames = (
    await cluster.app.db.query<{ frames: number }>(
      `SELECT (result->>'frames')::int AS frames FROM tasks WHERE parent_id = $1 ORDER BY child_index`,
      [(await showTask(cluster.app.db, chunked.renderId)).task.id],
    )
  ).map((r) => r.frames);
  t.is(frames.length, children.length);
  let join = 0;
  for (const n of frames.slice(0, -1)) {
    join += n;
    const [mine, theirs] = await Promise.all([lumaFrames(chunked.file, join - 3, join + 3), lumaFrames(single.file, join - 3, join + 3)]);
    t.is(mine.length, 6);
    const BAND = 32;
    for (const [i, frame] of mine.entries())
      for (let top = 0; top < SIZE.height; top += BAND) {
        let sum = 0;
        for (let j = top * SIZE.width; j < (top + BAND) * SIZE.width; j++) sum += Math.abs(frame[j]! - theirs[i]![j]!);
        const mean = sum / (BAND * SIZE.width);
        if (mean > 4) t.fail(`frame ${join - 3 + i} (join at ${join}), rows ${top}-${top + BAND}: differs by ${mean.toFixed(1)} levels`);
      }
  }
}

test.serial('on one agent each short renders in one pass: a render never waits for a second agent', async (t) => {
  for (const c of cases.values()) {
    const single = await render(c);
    t.is(single.children, 0, `${c.name}: no chunks`);
    c.single = single;
  }
  if (!TOOLS.flite) t.log('flite missing: the jump-cut short is not rendered');
});

test.serial(
  'with two idle agents, by default, each short is split at its cuts and joined: the same frames, sound and captions',
  async (t) => {
    await cluster.startAgent({ MAX_CONCURRENT_TASKS: '1' });
    for (const c of cases.values()) {
      const chunked = await render(c);
      const split = cluster.agents.flatMap((a) => a.logs.filter((l) => l.includes(chunked.renderId) && l.includes('"render split"')));
      const speeds = split.map((l) => (JSON.parse(l) as { speeds?: number[] }).speeds).find(Boolean);
      t.log(`${c.name}: ${chunked.children} chunks${speeds ? ` cut for speeds ${speeds.join(':')}` : ''}, compared with the one pass`);
      t.is(chunked.children, 2, `${c.name}: two chunks`);
      // The agent that rendered the one pass holds the source; the other fetched its chunk's stretch
      // by byte ranges (issue 35): what it renders here is read from that file.
      const reads = cluster.agents.flatMap((a) =>
        a.logs.filter((l) => l.includes(chunked.renderId) && /"source (stretch fetched|read from this host's cache)"/.test(l)),
      );
      t.is(reads.length, 2, `${c.name}: one read of the source a chunk`);
      const stretches = reads.filter((l) => l.includes('"source stretch fetched"')).map((l) => JSON.parse(l) as { whole: boolean });
      t.true(stretches.length >= 1 && stretches.every((r) => !r.whole), `${c.name}: ${reads.join('\n')}`);
      if (c.orient) {
        // The frames were turned by the graph: a matrix left on the joined file would flip them again.
        const [video] = (await probeJson(chunked.file, '-select_streams', 'v:0', '-show_streams')).streams ?? [];
        const m = displayMatrixOf(video);
        t.true(!m || (m[0]! > 0 && m[4]! > 0), `${c.name}: no mirroring matrix on the joined short (${JSON.stringify(m)})`);
      }
      await assertSame(t, c, chunked);
    }
  },
);
