import test from 'ava';
import { needing, systemFfmpegMajor } from './helpers/requirements.js';
import { mkdir, readFile, writeFile, symlink } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import {
  encodeTestVideo,
  FFMPEG,
  ffmpegWrapper,
  makeTestVideo,
  serveFiles,
  zeroTimestampAudio as zeroTimestampAudioIn,
  type MediaServer,
} from './helpers/media.js';
import { ffprobe, measureMediaDuration, runFfmpeg } from '../node-agent/src/media/ffmpeg.js';
import { extractAudio } from '../node-agent/src/media/audio-extract.js';
import { readWavInfo, readWavPcm, toMonoFloat32 } from '../node-agent/src/media/wav.js';
import { measureLevels, rmsDbBetween, scanWav } from '../node-agent/src/media/audio-levels.js';
import { chooseMediaTools, isBundledFfprobe, mediaToolWarnings, toolEnv } from '@shorts/common/media/tools';
import { analysisWavByteCap, lengthSlackSec } from '../node-agent/src/tasks/analyze-video.js';

// The agent bills what it decodes, decodes no more than it billed, runs media tools without secrets,
// prefers a current ffmpeg, and stops a task that runs past its time limit.
let cluster: TestCluster;
let media: MediaServer;
let slowMedia: MediaServer;
let crafted: string;

/** 15 minutes of quiet noise in a Matroska file whose header claims 1 second. */
async function craftedLongAudio(dir: string): Promise<string> {
  const honest = path.join(dir, 'long-honest.mkv');
  // The noise in full (not cut to the one-second picture), as 8-bit PCM.
  await encodeTestVideo(honest, ['color=c=gray:s=64x64:r=1:d=1'], {
    tone: 'anoisesrc=d=900:c=pink:r=8000:a=0.02',
    audioArgs: ['-c:a', 'pcm_u8'],
  });
  const bytes = await readFile(honest);
  // Segment Info's Duration element (ID 0x4489, an 8-byte float of milliseconds).
  const at = bytes.indexOf(Buffer.from([0x44, 0x89, 0x88]));
  if (at < 0) throw new Error('no Duration element');
  bytes.writeDoubleBE(1000, at + 3);
  const out = path.join(dir, 'long-says-1s.mkv');
  await writeFile(out, bytes);
  return out;
}

/**
 * 30 s of audio whose packets all carry timestamp 0 (the `setts` bitstream filter of ffmpeg 5+):
 * read packet by packet it ends almost at once, yet it decodes to 30 s, and a `-t` limit, which
 * works on timestamps, does not stop it. Undefined when no ffmpeg with `setts` is at hand.
 */
async function zeroTimestampAudio(dir: string): Promise<string | undefined> {
  const system = chooseMediaTools({ PATH: process.env.PATH });
  if (system.source !== 'system') return undefined;
  return zeroTimestampAudioIn(system.ffmpegPath, dir);
}
let zeroTs: string | undefined;
/** A current ffmpeg on PATH (what zeroTimestampAudio and ffmpegWithoutFfprobe use), known as the file loads. */
const haveSystemFfmpeg = chooseMediaTools({ PATH: process.env.PATH }).source === 'system';
const withSetts = needing({ tools: { 'a system ffmpeg 5+ with the setts filter (to craft the file)': haveSystemFfmpeg } });
const withSystemFfmpeg = needing({ tools: { 'a system ffmpeg 5+': haveSystemFfmpeg } });

test.before(async () => {
  cluster = await startCluster('agent_media_hardening');
  crafted = await craftedLongAudio(cluster.dataDir);
  zeroTs = await zeroTimestampAudio(cluster.dataDir).catch(() => undefined);
  const clip = await makeTestVideo(path.join(cluster.dataDir, 'clip.mp4'), { seconds: 2 });
  media = await serveFiles({ 'long.mkv': crafted, ...(zeroTs ? { 'zero-ts.mkv': zeroTs } : {}) });
  slowMedia = await serveFiles({ 'clip.mp4': clip }, { bytesPerSec: 8_000 });
});
test.after.always(async () => {
  await media?.close();
  await slowMedia?.close();
  await cluster?.close();
});
test.afterEach.always(() => cluster.killAgents());

test('the decoded length, not the declared one: measured by reading every packet', async (t) => {
  const declared = await ffprobe(crafted);
  t.true(declared.durationSec < 1.5, `the header claims ${declared.durationSec} s`);
  const measured = await measureMediaDuration(FFMPEG, crafted);
  t.true(Math.abs(measured - 900) < 1, `measured ${measured} s`);
});

test('audio extraction stops at the billed length', async (t) => {
  const wav = path.join(cluster.dataDir, 'billed.wav');
  await extractAudio(FFMPEG, crafted, wav, { durationSec: 60 });
  t.true(Math.abs((await readWavInfo(wav)).durationSec - 60) < 0.1);
});

test.serial('a job on a file that claims 1 s but holds 15 minutes is priced for 15 minutes', async (t) => {
  await cluster.startAgent();
  // 15 minutes on the free plan cost 0.45 credits; 1 s would cost the 0.30 minimum.
  const { org, key } = await cluster.org({ plan: 'free', credits: 0.35 });
  const created = await cluster.api('POST', '/api/jobs', { key, body: { functionName: 'VideoShorts', fileUrl: media.url('long.mkv') } });
  t.is(created.status, 201);
  const job = await cluster.settledJob(key, created.body.id, { timeoutMs: 120_000 });
  t.is(job.status, 'FAILED');
  t.regex(job.message ?? job.errorMessage ?? JSON.stringify(job), /15\.0 minutes cost 0\.45/);
  const row = await cluster.app.db.one<{ credits: string; reserved: string }>(
    'SELECT credits, reserved_credits AS reserved FROM organizations WHERE id = $1',
    [org.id],
  );
  t.is(Number(row!.credits), 0.35);
  t.is(Number(row!.reserved), 0);
});

withSetts.serial('a file whose audio decodes far past its measured length fails clearly instead of being transcribed', async (t) => {
  await cluster.startAgent();
  const { key } = await cluster.org({ plan: 'pro', credits: 10 });
  const created = await cluster.api('POST', '/api/jobs', { key, body: { functionName: 'VideoShorts', fileUrl: media.url('zero-ts.mkv') } });
  t.is(created.status, 201);
  const job = await cluster.settledJob(key, created.body.id, { timeoutMs: 120_000 });
  t.is(job.status, 'FAILED');
  // Stopped by the output cap a little past the billed second and its slack, not after all 30 s were decoded.
  const decoded = /audio decodes to at least (\d+\.\d) s but the file's streams end at (\d+\.\d) s/.exec(JSON.stringify(job));
  t.truthy(decoded, JSON.stringify(job));
  const billed = Number(decoded![2]);
  t.true(Number(decoded![1]) < billed + lengthSlackSec(billed) + 2, `decoded ${decoded![1]} s of a file billed for ${billed} s`);
});

withSetts('audio extraction is capped by output size where lying timestamps defeat -t', async (t) => {
  const billed = await measureMediaDuration(FFMPEG, zeroTs!);
  t.true(billed < 1.5, `read packet by packet the file ends at ${billed} s`);
  const uncapped = path.join(cluster.dataDir, 'zero-uncapped.wav');
  await extractAudio(FFMPEG, zeroTs!, uncapped, { durationSec: billed });
  t.true((await readWavInfo(uncapped)).durationSec > 25, '-t alone lets the whole 30 s through');
  const capped = path.join(cluster.dataDir, 'zero-capped.wav');
  await extractAudio(FFMPEG, zeroTs!, capped, { durationSec: billed, maxBytes: analysisWavByteCap(billed) });
  const sec = (await readWavInfo(capped)).durationSec;
  // Past the length check's slack (so the mismatch is reported), far short of the 30 s.
  t.true(sec > billed + lengthSlackSec(billed) && sec < billed + lengthSlackSec(billed) + 2, `capped decode: ${sec} s`);
});

test('WAV levels and loudness are read streaming and agree with the whole-file reading', async (t) => {
  const wav = path.join(cluster.dataDir, 'levels.wav');
  await extractAudio(FFMPEG, path.join(cluster.dataDir, 'clip.mp4'), wav);
  const pcm = await readWavPcm(wav);
  const mono = toMonoFloat32(pcm);
  const whole = measureLevels(mono, pcm.sampleRate);
  const { levels, loudness } = await scanWav(wav);
  t.true(Math.abs(levels.durationSec - whole.durationSec) < 1e-6);
  for (const k of ['rmsDb', 'peakDb', 'loudestWindowDb'] as const)
    t.true(Math.abs(levels[k] - whole[k]) < 0.01, `${k}: ${levels[k]} vs ${whole[k]}`);
  for (const [a, b] of [
    [0, 2],
    [0.5, 1.2],
    [1.91, 2],
  ]) {
    t.true(Math.abs(loudness(a!, b!) - rmsDbBetween(mono, pcm.sampleRate, a!, b!)) < 0.5, `${a}..${b}`);
  }
  t.is(loudness(5, 6), -Infinity);
});

test('ffmpeg and ffprobe run without the cluster token or any other secret in their environment', async (t) => {
  const dir = path.join(cluster.dataDir, 'envcheck');
  await mkdir(dir, { recursive: true });
  const dump = path.join(dir, 'env.txt');
  const wrapper = path.join(dir, 'ffmpeg-wrapper');
  await ffmpegWrapper(wrapper, FFMPEG, `env >> ${dump}`);
  const saved = { ...process.env };
  Object.assign(process.env, {
    CLUSTER_TOKEN: 'cluster-secret-123',
    TRANSCRIBE_API_KEY: 'sk-secret-456',
    AWS_SECRET_ACCESS_KEY: 'aws-secret-789',
  });
  try {
    await runFfmpeg(wrapper, ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'sine=duration=0.1', '-f', 'null', '-'], {
      durationSec: 0.1,
    });
    await extractAudio(wrapper, path.join(cluster.dataDir, 'clip.mp4'), path.join(dir, 'a.wav'));
    await measureMediaDuration(wrapper, path.join(cluster.dataDir, 'clip.mp4'));
  } finally {
    for (const k of ['CLUSTER_TOKEN', 'TRANSCRIBE_API_KEY', 'AWS_SECRET_ACCESS_KEY']) delete process.env[k];
    Object.assign(process.env, saved);
  }
  const seen = await readFile(dump, 'utf8');
  t.true(seen.includes('PATH='), 'the tools still get PATH');
  for (const secret of ['cluster-secret-123', 'sk-secret-456', 'aws-secret-789']) t.false(seen.includes(secret), secret);
  t.deepEqual(Object.keys(toolEnv({ CLUSTER_TOKEN: 'x', S3_SECRET_ACCESS_KEY: 'y', DATABASE_URL: 'z', HOME: '/h', LANG: 'C' })).sort(), [
    'GLIBC_TUNABLES',
    'HOME',
    'LANG',
  ]);
  // Frame-sized allocations stay in the heap (tools.ts says why); an operator's own setting wins.
  t.regex(toolEnv({}).GLIBC_TUNABLES!, /glibc\.malloc\.mmap_threshold=\d+/);
  t.is(toolEnv({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' }).GLIBC_TUNABLES, 'glibc.malloc.arena_max=2');
});

test('media tools: FFMPEG_PATH/FFPROBE_PATH win, then a system ffmpeg 5+, else the bundled build', async (t) => {
  const given = chooseMediaTools({ FFMPEG_PATH: '/opt/ff/ffmpeg', FFPROBE_PATH: '/opt/ff/ffprobe', PATH: '/usr/bin' });
  t.like(given, { ffmpegPath: '/opt/ff/ffmpeg', ffprobePath: '/opt/ff/ffprobe', source: 'env' });
  // A PATH whose ffmpeg is the old 2018 snapshot build: not taken as "system".
  const oldDir = path.join(cluster.dataDir, 'old-ffmpeg');
  await mkdir(oldDir, { recursive: true });
  if (!existsSync(path.join(oldDir, 'ffmpeg'))) await symlink(FFMPEG, path.join(oldDir, 'ffmpeg'));
  t.is(chooseMediaTools({ PATH: oldDir }).source, 'bundled');
  t.is(chooseMediaTools({ PATH: path.join(cluster.dataDir, 'nothing-here') }).ffmpegPath, FFMPEG);
});

needing({ tools: { 'a system ffmpeg 5+ in /usr/bin': systemFfmpegMajor >= 5 } })(
  'media tools: a system ffmpeg 5+ on PATH is taken, FFPROBE_PATH still wins for ffprobe',
  (t) => {
    const system = chooseMediaTools({ PATH: '/usr/bin' });
    t.like(system, { ffmpegPath: '/usr/bin/ffmpeg', ffprobePath: '/usr/bin/ffprobe', source: 'system' });
    t.like(chooseMediaTools({ PATH: '/usr/bin', FFPROBE_PATH: '/opt/probe' }), {
      ffmpegPath: '/usr/bin/ffmpeg',
      ffprobePath: '/opt/probe',
    });
  },
);

test.serial('an agent with only the bundled ffmpeg warns at start', async (t) => {
  const agent = await cluster.startAgent({ PATH: path.join(cluster.dataDir, 'old-ffmpeg'), AGENT_TASK_TYPES: 'probe-media' });
  const line = await agent.waitForLog(/bundled 2018 ffmpeg/, 5000);
  t.regex(line, /"level":"warn"/);
});

/** A folder whose only tool is a link to the system ffmpeg: a current ffmpeg with no ffprobe beside it. */
async function ffmpegWithoutFfprobe(): Promise<string | undefined> {
  const system = chooseMediaTools({ PATH: process.env.PATH });
  if (system.source !== 'system') return undefined;
  const dir = path.join(cluster.dataDir, 'ffmpeg-alone');
  await mkdir(dir, { recursive: true });
  if (!existsSync(path.join(dir, 'ffmpeg'))) await symlink(system.ffmpegPath, path.join(dir, 'ffmpeg'));
  return dir;
}

withSystemFfmpeg('a current ffmpeg without an ffprobe beside it: the bundled ffprobe is used, and said so', async (t) => {
  const dir = await ffmpegWithoutFfprobe();
  const tools = chooseMediaTools({ PATH: dir });
  t.is(tools.source, 'system');
  t.true(isBundledFfprobe(tools.ffprobePath));
  t.deepEqual(
    mediaToolWarnings(tools).map((w) => w.message),
    [
      `probing untrusted media with the bundled 2018 ffprobe build: no ffprobe 5 or later next to ${path.join(dir!, 'ffmpeg')}; install the one of the same ffmpeg or set FFPROBE_PATH`,
    ],
  );
  t.deepEqual(
    mediaToolWarnings(chooseMediaTools({ PATH: dir, FFPROBE_PATH: '/usr/bin/ffprobe' })),
    [],
    'FFPROBE_PATH set: nothing to warn about',
  );
});

withSystemFfmpeg.serial('an agent whose ffmpeg has no ffprobe beside it warns at start', async (t) => {
  const dir = await ffmpegWithoutFfprobe();
  const agent = await cluster.startAgent({ PATH: dir!, AGENT_TASK_TYPES: 'probe-media' });
  const line = await agent.waitForLog(/bundled 2018 ffprobe/, 5000);
  t.regex(line, /"level":"warn"/);
  t.false(
    agent.logs.some((l) => /bundled 2018 ffmpeg/.test(l)),
    'the ffmpeg itself is current',
  );
});

test.serial('a task past its wall-clock limit fails with a clear message and its work is stopped', async (t) => {
  const agent = await cluster.startAgent({ TASK_TIME_LIMITS: 'probe-media=1', AGENT_TASK_TYPES: 'probe-media' });
  const { key } = await cluster.org();
  const created = await cluster.api('POST', '/api/probes', { key, body: { url: slowMedia.url('clip.mp4') } });
  t.is(created.status, 201);
  const probe = await waitFor(
    async () => {
      const r = await cluster.api('GET', `/api/probes/${created.body.id}`, { key });
      return r.body.state === 'completed' || r.body.state === 'failed' ? r.body : undefined;
    },
    30_000,
    'probe to settle',
  );
  t.is(probe.state, 'failed');
  t.regex(JSON.stringify(probe), /ran past its time limit of 1 s/);
  await agent.waitForLog(/task stopped: time limit/, 5000);
});
