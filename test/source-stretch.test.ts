import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fetchSourceStretch } from '../node-agent/src/tasks/source-stretch.js';
import type { StretchNeed } from '../node-agent/src/media/mp4-stretch.js';
import { parseMoov } from '../node-agent/src/media/mp4-index.js';
import { ffprobe } from '../node-agent/src/media/ffmpeg.js';
import { agentTools, FFMPEG } from './helpers/media.js';
import { serveRanged } from './helpers/range-server.js';

// A render chunk's stretch of the source, fetched by byte ranges (issue 35): against a server that
// counts what it sends, a 4 s stretch of a 60 s MP4 costs a fraction of the file, and ffmpeg reads
// from the file so laid out exactly what it reads from the whole file (every frame and sound packet
// of the stretch, decoded, the same), whether the index comes first or last, the file was cut with an
// edit list, or the stretch reaches the end. What cannot be laid out so is fetched whole.

const run = promisify(execFile);
const tools = agentTools();
let dir: string;
const files: Record<string, Buffer> = {};
let media: Awaited<ReturnType<typeof serveRanged>>;
let plain: Awaited<ReturnType<typeof serveRanged>>;

const SECONDS = 60;

test.before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'stretch-'));
  const encode = ['-c:v', 'libx264', '-preset', 'veryfast', '-g', '50', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest'];
  const source = (name: string, extra: string[]) =>
    run(FFMPEG, [
      ...['-y', '-v', 'error', '-f', 'lavfi', '-i', `testsrc2=s=640x360:r=25:d=${SECONDS}`, '-f', 'lavfi', '-i', `sine=f=330:d=${SECONDS}`],
      ...encode,
      ...extra,
      path.join(dir, name),
    ]);
  // B-frames (veryfast), a keyframe every 2 s; the index first, as the analysis stores most sources.
  await source('index-first.mp4', ['-movflags', '+faststart']);
  await source('index-last.mp4', []);
  await source('source.mkv', []);
  // Cut from a non-keyframe without re-encoding: an edit list hides the frames before the cut.
  await run(FFMPEG, [
    '-y',
    '-v',
    'error',
    '-ss',
    '3.3',
    '-i',
    path.join(dir, 'index-last.mp4'),
    '-c',
    'copy',
    path.join(dir, 'edited.mp4'),
  ]);
  for (const name of ['index-first.mp4', 'index-last.mp4', 'source.mkv', 'edited.mp4']) files[name] = await readFile(path.join(dir, name));
  const served = Object.fromEntries(Object.entries(files).map(([n, b]) => [n, () => b]));
  media = await serveRanged(served, { ranges: true });
  plain = await serveRanged(served, { ranges: false });
});

test.after.always(async () => {
  await media?.close();
  await plain?.close();
});

const chunk = (from: number, to: number, other?: { from: number; to: number }): StretchNeed => ({
  video: { from, to },
  other: other ?? { from, to },
});

let seq = 0;
/** Fetches the stretch of `name` and answers the laid-out file and what crossed the network. */
async function fetchStretch(name: string, need: StretchNeed, server = media) {
  const before = server.total(name);
  const dest = path.join(dir, `stretch-${seq++}-${name}`);
  const fetched = await fetchSourceStretch(server.url(name), dest, need, new AbortController().signal);
  return { dest, fetched, served: server.total(name) - before };
}

/** Every decoded frame (or sound frame) of `stream` that ffmpeg reads over [from, to], as the render does. */
async function decoded(file: string, stream: 'v' | 'a', from: number, to: number): Promise<string> {
  const { stdout } = await run(
    tools.ffmpegPath,
    ['-v', 'error', '-ss', String(from), '-to', String(to), '-i', file, '-map', `0:${stream}:0`, '-f', 'framemd5', '-'],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  return stdout;
}

for (const name of ['index-first.mp4', 'index-last.mp4', 'edited.mp4']) {
  test.serial(`${name}: a 4 s stretch costs a fraction of the file and decodes as the whole file does`, async (t) => {
    const whole = path.join(dir, name);
    const size = files[name]!.length;
    const { dest, fetched, served } = await fetchStretch(name, chunk(30, 34));
    t.false(fetched.whole, 'laid out, not fetched whole');
    t.is(fetched.bytes, served, 'it counts what crossed the network');
    t.is((await stat(dest)).size, size, 'the file at its full size');
    t.log(`${name}: ${served} of ${size} bytes (${((100 * served) / size).toFixed(1)} %) in ${fetched.ranges} ranges`);
    // The stretch, its keyframe and margins, and the head ffmpeg decodes when it opens the file:
    // 4 + 2 + 3 + 2 of 60 s.
    t.true(served < size * 0.25, `${served} of ${size} bytes fetched`);
    const [a, b] = await Promise.all([decoded(whole, 'v', 30, 34), decoded(dest, 'v', 30, 34)]);
    t.true(a.split('\n').length > 90, 'the stretch has its frames');
    t.is(b, a, 'every frame of the stretch the same');
    const [probedWhole, probedStretch] = await Promise.all([ffprobe(whole, tools), ffprobe(dest, tools)]);
    t.deepEqual(probedStretch, probedWhole, 'the probe reads the same');
  });
}

test.serial('the chunk that encodes the sound: the video of its own stretch, the sound of the whole short', async (t) => {
  const whole = path.join(dir, 'index-first.mp4');
  const size = files['index-first.mp4']!.length;
  const { dest, fetched, served } = await fetchStretch('index-first.mp4', chunk(12, 20, { from: 12, to: 36 }));
  const [video, sound] = await Promise.all([decoded(dest, 'v', 12, 20), decoded(dest, 'a', 12, 36)]);
  t.is(video, await decoded(whole, 'v', 12, 20));
  t.is(sound, await decoded(whole, 'a', 12, 36));
  // ffmpeg interleaves sound and video frame by frame: the sound of 20-36 s comes with the video
  // between its packets, in a bounded number of requests. Still not the whole file.
  t.true(fetched.ranges <= 32, `${fetched.ranges} ranges`);
  t.true(served < size * 0.6, `${served} of ${size} bytes`);
});

test.serial('a stretch at the start and one that reaches the end decode as the whole file does', async (t) => {
  const whole = path.join(dir, 'index-last.mp4');
  for (const [from, to] of [
    [0, 5],
    [55, SECONDS],
  ] as const) {
    const { dest, fetched } = await fetchStretch('index-last.mp4', chunk(from, to));
    t.false(fetched.whole);
    t.is(await decoded(dest, 'v', from, to), await decoded(whole, 'v', from, to), `${from}-${to}`);
  }
});

test.serial('what cannot be laid out is fetched whole: another container, a store without ranges', async (t) => {
  const mkv = await fetchStretch('source.mkv', chunk(30, 34));
  t.true(mkv.fetched.whole);
  t.true((await readFile(mkv.dest)).equals(files['source.mkv']!));
  const noRanges = await fetchStretch('index-first.mp4', chunk(30, 34), plain);
  t.true(noRanges.fetched.whole);
  t.true((await readFile(noRanges.dest)).equals(files['index-first.mp4']!));
  t.is(noRanges.served, files['index-first.mp4']!.length, 'the whole file once: its first answer is kept');
});

test('an index this does not model is refused, not guessed: a fragmented MP4, several edits', async (t) => {
  const fragmented = path.join(dir, 'fragmented.mp4');
  await run(FFMPEG, [
    ...['-y', '-v', 'error', '-i', path.join(dir, 'index-first.mp4'), '-t', '4', '-c', 'copy'],
    ...['-movflags', 'frag_keyframe+empty_moov', fragmented],
  ]);
  const moovOf = (file: Buffer) => {
    for (let at = 0; at + 8 <= file.length; at += file.readUInt32BE(at))
      if (file.toString('latin1', at + 4, at + 8) === 'moov') return file.subarray(at, at + file.readUInt32BE(at));
    throw new Error('no moov');
  };
  t.is(parseMoov(moovOf(await readFile(fragmented))), null, 'fragmented');
  const tracks = parseMoov(moovOf(files['index-first.mp4']!));
  t.deepEqual(
    tracks?.map((tr) => tr.handler),
    ['vide', 'soun'],
  );
  t.is(tracks![0]!.size.length, SECONDS * 25);
  // Two stretches of media in one edit list: not modelled.
  const twoEdits = Buffer.from(moovOf(files['edited.mp4']!));
  const elst = twoEdits.indexOf('elst');
  t.true(elst > 0);
  const entries = twoEdits.readUInt32BE(elst + 8);
  t.is(entries, 1, 'ffmpeg wrote one edit');
  // The same edit twice: two stretches of media, refused.
  const body = twoEdits.subarray(elst + 12, elst + 12 + (twoEdits[elst + 4] === 1 ? 20 : 12));
  const doubled = Buffer.concat([twoEdits.subarray(0, elst + 12), body, body, twoEdits.subarray(elst + 12 + body.length)]);
  // Sizes of the boxes around it grow by one entry: moov, trak, edts, elst.
  const grow = (at: number) => doubled.writeUInt32BE(doubled.readUInt32BE(at) + body.length, at);
  doubled.writeUInt32BE(2, elst + 8);
  for (const box of ['moov', 'trak', 'edts', 'elst']) {
    const at = box === 'moov' ? 0 : doubled.lastIndexOf(box, elst + 4) - 4;
    grow(at);
  }
  t.is(parseMoov(doubled), null, 'several edits');
});
