import test from 'ava';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { FFMPEG } from './helpers/media.js';
import { containerType, ffprobe } from '../node-agent/src/media/ffmpeg.js';
import { fileNameOf } from '../node-agent/src/tasks/analyze-video.js';
import { cutCropClip } from '../node-agent/src/media/clips.js';
import { extractAudio, NoAudioTrackError } from '../node-agent/src/media/audio-extract.js';
import { parseWav, readWavInfo, readWavPcm, toMonoFloat32, encodeWav } from '../node-agent/src/media/wav.js';
import { measureLevels, rmsDbBetween } from '../node-agent/src/media/audio-levels.js';
import { runProcess } from '../node-agent/src/run-process.js';

const ffmpeg = FFMPEG;
let dir: string;
test.before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'audio-test-'));
});
test.after.always(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function makeVideo(name: string, withAudio: boolean, seconds = 3) {
  const out = path.join(dir, name);
  const args = ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', `testsrc=size=160x120:rate=10:duration=${seconds}`];
  if (withAudio) args.push('-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=44100:duration=${seconds}`, '-ac', '2');
  args.push('-c:v', 'mpeg4', ...(withAudio ? ['-c:a', 'aac'] : []), '-shortest', '-y', out);
  const r = await runProcess(ffmpeg, args);
  if (r.code !== 0) throw new Error(r.stderr);
  return out;
}

test('extracts 16 kHz mono s16 from a video with stereo 44.1 kHz audio', async (t) => {
  const video = await makeVideo('with-audio.mp4', true);
  const wav = path.join(dir, 'out.wav');
  await extractAudio(ffmpeg, video, wav);
  const info = await readWavInfo(wav);
  t.like(info, { sampleRate: 16_000, channels: 1, bitsPerSample: 16 });
  t.true(Math.abs(info.durationSec - 3) < 0.1, `${info.durationSec}`);
  const pcm = await readWavPcm(wav);
  const levels = measureLevels(toMonoFloat32(pcm), pcm.sampleRate);
  t.true(levels.loudestWindowDb > -30, 'the tone survived');
  t.true(rmsDbBetween(toMonoFloat32(pcm), 16_000, 1, 2) > -30);

  const part = path.join(dir, 'part.wav');
  await extractAudio(ffmpeg, video, part, { startSec: 1, durationSec: 1 });
  t.true(Math.abs((await readWavInfo(part)).durationSec - 1) < 0.05);
});

test('a video without an audio track fails with a clear error', async (t) => {
  const video = await makeVideo('no-audio.mp4', false);
  const err = await t.throwsAsync(extractAudio(ffmpeg, video, path.join(dir, 'x.wav')), { instanceOf: NoAudioTrackError });
  t.regex(err!.message, /no audio track/);
});

test('a playlist pointing at the network is refused by the protocol whitelist', async (t) => {
  const m3u8 = path.join(dir, 'evil.m3u8');
  await writeFile(m3u8, '#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\nhttp://127.0.0.1:9/secret.ts\n#EXT-X-ENDLIST\n');
  await t.throwsAsync(extractAudio(ffmpeg, m3u8, path.join(dir, 'y.wav')), { message: /not on whitelist/ });
});

test('a playlist or concat list naming local files is not read, whatever its name', async (t) => {
  // On a shared host the named file could be another organization's video.
  const secret = await makeVideo('other-org-secret.mp4', true);
  const hls = `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:3,\n${secret}\n#EXT-X-ENDLIST\n`;
  const concat = `ffconcat version 1.0\nfile other-org-secret.mp4\n`;
  for (const [name, text] of [
    ['playlist.m3u8', hls],
    ['playlist-named.mp4', hls],
    ['list.ffconcat', concat],
    ['list-named.mov', concat],
  ] as const) {
    const input = path.join(dir, name);
    await writeFile(input, text);
    await t.throwsAsync(extractAudio(ffmpeg, input, path.join(dir, `${name}.wav`)), undefined, `extractAudio ${name}`);
    await t.throwsAsync(ffprobe(input), undefined, `ffprobe ${name}`);
    await t.throwsAsync(cutCropClip(ffmpeg, clipSpec(input, path.join(dir, `${name}.clip.mp4`), 160, 120)), undefined, `clip ${name}`);
  }
  // The same files as plain containers still go through.
  t.true((await ffprobe(secret)).hasAudio);
});

const clipSpec = (sourcePath: string, out: string, sourceWidth: number, sourceHeight: number) => ({
  sourcePath,
  out,
  start: 0,
  end: 1,
  sourceWidth,
  sourceHeight,
  reframe: null,
  encoder: 'libx264' as const,
  workDir: path.join(dir, 'clip-work'),
});

test('an abort kills ffmpeg', async (t) => {
  const ctrl = new AbortController();
  const started = Date.now();
  setTimeout(() => ctrl.abort(new Error('cancelled')), 200);
  // An endless generated input: only the abort can end it.
  const p = runProcess(ffmpeg, ['-hide_banner', '-f', 'lavfi', '-re', '-i', 'sine=frequency=440', '-f', 'null', '-'], ctrl.signal);
  await t.throwsAsync(p, { message: 'cancelled' });
  t.true(Date.now() - started < 5000);
});

test('WAV parsing skips extra chunks and tolerates a placeholder data size', (t) => {
  const wav = encodeWav(Int16Array.from([1, -2, 3, -4]), 16_000);
  // Insert a LIST chunk between fmt and data, as ffmpeg does.
  const list = Buffer.concat([Buffer.from('LIST'), Buffer.from([4, 0, 0, 0]), Buffer.from('INFO')]);
  const withList = Buffer.concat([wav.subarray(0, 36), list, wav.subarray(36)]);
  t.deepEqual([...parseWav(withList).samples], [1, -2, 3, -4]);
  const streamed = Buffer.from(wav);
  streamed.writeUInt32LE(0xffffffff, 40);
  t.deepEqual([...parseWav(streamed).samples], [1, -2, 3, -4]);
  t.throws(() => parseWav(Buffer.from('not a wav file at all')), { message: /RIFF/ });
});

test('a stored source is labelled by its container, not assumed MP4', async (t) => {
  const mp4 = await makeVideo('c.mp4', true);
  const run = (args: string[]) =>
    runProcess(ffmpeg, ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=64x48:rate=5:duration=1', ...args]);
  const webm = path.join(dir, 'c.webm');
  await run(['-c:v', 'libvpx-vp9', webm]);
  const mkv = path.join(dir, 'c.mkv');
  await run(['-c:v', 'libx264', mkv]);
  const avi = path.join(dir, 'c.avi');
  await run(['-c:v', 'mpeg4', avi]);
  t.deepEqual(containerType(await ffprobe(mp4)), { contentType: 'video/mp4', extension: 'mp4' });
  t.deepEqual(containerType(await ffprobe(webm)), { contentType: 'video/webm', extension: 'webm' });
  t.deepEqual(containerType(await ffprobe(mkv)), { contentType: 'video/x-matroska', extension: 'mkv' });
  t.deepEqual(containerType(await ffprobe(avi)), { contentType: 'video/x-msvideo', extension: 'avi' });
});

test('a phone video stored landscape with a quarter-turn rotation is probed and cropped upright', async (t) => {
  const landscape = path.join(dir, 'land.mp4');
  const rotated = path.join(dir, 'rotated.mp4');
  let r = await runProcess(ffmpeg, [
    '-hide_banner',
    '-loglevel',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=640x360:rate=10:duration=2',
    '-c:v',
    'libx264',
    '-pix_fmt',
    'yuv420p',
    landscape,
  ]);
  t.is(r.code, 0, r.stderr);
  r = await runProcess(ffmpeg, [
    '-hide_banner',
    '-loglevel',
    'error',
    '-y',
    '-i',
    landscape,
    '-c',
    'copy',
    '-metadata:s:v:0',
    'rotate=90',
    rotated,
  ]);
  t.is(r.code, 0, r.stderr);
  const info = await ffprobe(rotated);
  t.deepEqual([info.width, info.height], [360, 640], 'display size, as ffmpeg decodes it');
  const clip = path.join(dir, 'rotated-clip.mp4');
  await cutCropClip(ffmpeg, clipSpec(rotated, clip, info.width, info.height));
  const out = await ffprobe(clip);
  t.deepEqual([out.width, out.height], [360, 640], 'an upright portrait source is kept whole');
});

test('the stored source keeps a readable name from its URL, whatever the URL holds', (t) => {
  t.is(fileNameOf('https://cdn.example.com/talks/My%20Talk%20%C3%A9t%C3%A9.mp4?sig=1'), 'My Talk été.mp4');
  t.is(fileNameOf('https://cdn.example.com/v/bad%E0%A4%A.mp4'), 'bad%E0%A4%A.mp4');
  t.is(fileNameOf('https://cdn.example.com/'), 'video');
  t.is(fileNameOf('https://cdn.example.com/a%00b%0A.mp4'), 'ab.mp4');
});
