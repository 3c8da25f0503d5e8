import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { DEFAULT_DIRECTOR } from '@shorts/common/reframe/director';
import type { Reframe, ShortDetections } from '@shorts/common/reframe/types';
import { extractAudio } from '../node-agent/src/media/audio-extract.js';
import { contains, interpolate, planReframe } from '@shorts/common/reframe/camera';
import { gridClips } from './helpers/grid.js';
import { FFMPEG } from './helpers/media.js';
import { detectWholeVideo } from './helpers/reframe.js';
import { needing } from './helpers/requirements.js';

// A subject who moves: followed by continuous, eased tracking (no pan, hold, pan pulsing), and a
// subject faster than any pan should go is one cut, not a chase.

const run = promisify(execFile);
const FPS = 25;
const OUT = { width: 1080, height: 1920 };
const media = gridClips();
const withMedia = needing({ media: Boolean(media) }).serial;
let dir: string;

test.before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'reframe-motion-'));
});
test.after.always(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A GRID speaker (its 3 s clip looped to `seconds`) whose panel's left edge follows `x` (an ffmpeg
 *  expression in t) across a 1280x720 grey canvas. */
async function movingSpeaker(name: string, x: string, seconds: number): Promise<ShortDetections> {
  const videoPath = path.join(dir, `${name}.mp4`);
  await run(FFMPEG, [
    '-y',
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    `color=c=0x2a2a2a:s=1280x720:r=${FPS}:d=${seconds}`,
    '-stream_loop',
    '-1',
    '-i',
    media![0].file,
    '-filter_complex',
    `[1:v]fps=${FPS},scale=270:216,setsar=1[p];[0:v][p]overlay=x='${x}':y=252:shortest=1[v];[1:a]atrim=duration=${seconds}[a]`,
    '-map',
    '[v]',
    '-map',
    '[a]',
    '-t',
    String(seconds),
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    videoPath,
  ]);
  const wavPath = path.join(dir, `${name}.wav`);
  await extractAudio(FFMPEG, videoPath, wavPath);
  return detectWholeVideo({ videoPath, wavPath, width: 1280, height: 720, durationSec: seconds });
}

/** The window centre's movement from each frame to the next, in source pixels (NaN across a cut). */
function steps(r: Reframe, from: number, to: number): number[] {
  const out: number[] = [];
  for (let t = from + 1 / FPS; t < to; t += 1 / FPS) {
    const a = interpolate(r.keyframes, t - 1 / FPS);
    const b = interpolate(r.keyframes, t);
    const cut = r.keyframes.some((k, i) => i > 0 && r.keyframes[i - 1]!.time === k.time && k.time > t - 1 / FPS && k.time <= t);
    out.push(cut ? NaN : b.x - a.x);
  }
  return out;
}

withMedia('a speaker walking across the frame is followed continuously: in the window throughout, no stop-and-go', async (t) => {
  // 110 px a second, left to right over 8 s.
  const d = await movingSpeaker('walk', '60+110*t', 8);
  const r = planReframe(d, DEFAULT_DIRECTOR, OUT);
  const track = d.tracks.sort((a, b) => b.samples.length - a.samples.length)[0]!;
  const inside = track.samples.filter((s) => contains(interpolate(r.keyframes, s.time), s.box)).length;
  t.log(`face in the window ${inside}/${track.samples.length} samples; ${r.keyframes.length} keyframes`);
  t.true(inside >= 0.95 * track.samples.length, `${inside}/${track.samples.length}`);
  // Once it has caught up (after the first second), the window keeps moving with the walk: no hold of a
  // fifth of a second or more (pan, hold, pan pulsing held ~0.45 s at a time), and never backwards.
  const moves = steps(r, 1.5, 7.5);
  t.false(moves.some(Number.isNaN), 'no cut while walking at a walking pace');
  let still = 0;
  let longestStill = 0;
  for (const m of moves) {
    still = Math.abs(m) < 0.5 ? still + 1 : 0;
    longestStill = Math.max(longestStill, still);
  }
  t.log(
    `longest hold while walking: ${longestStill} frames; mean step ${(moves.reduce((s, m) => s + m, 0) / moves.length).toFixed(2)} px/frame`,
  );
  t.true(longestStill < 0.2 * FPS, `the window stood still for ${longestStill} frames while the face walked`);
  t.true(
    moves.every((m) => m > -0.5),
    'never moves against the walk',
  );
});

withMedia('a speaker who dashes across the frame in a third of a second gets one cut, not a chase', async (t) => {
  const d = await movingSpeaker('dash', 'if(lt(t,2.5),80,if(lt(t,2.83),80+(t-2.5)/0.33*850,930))', 6);
  const r = planReframe(d, DEFAULT_DIRECTOR, OUT);
  const moves = steps(r, 0.2, 5.8);
  const cuts = moves.filter(Number.isNaN).length;
  const travelling = moves.filter((m) => Math.abs(m) >= 0.5).length;
  t.log(`keyframes ${JSON.stringify(r.keyframes.map((k) => [k.time, k.x]))}`);
  t.is(cuts, 1, 'one cut to the new place');
  t.true(travelling <= 0.4 * FPS, `the window does not chase the dash (${travelling} moving frames)`);
  const track = d.tracks.sort((a, b) => b.samples.length - a.samples.length)[0]!;
  const late = track.samples.filter((s) => s.time > 3.5 && !contains(interpolate(r.keyframes, s.time), s.box));
  t.deepEqual(
    late.map((s) => s.time),
    [],
    'framed again once the dash is over',
  );
});
