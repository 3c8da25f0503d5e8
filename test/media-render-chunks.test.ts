import test from 'ava';
import { planChunkCuts, secToUs, type SourceFrames } from '../node-agent/src/media/render-chunks.js';

// Where a long render is cut (issue 22), against ffmpeg's own rules: after an input -ss it keeps the
// frames at or after it, and with -to those whose distance from the first kept frame is under
// (to - ss), in the stream's ticks (av_rescale rounding). Every frame of the single pass must land in
// exactly one chunk, each chunk after the first starting on a keyframe of the single pass.

/** A constant-rate source's frames: `fps` as num/den, in a stream time base of 1/tbDen. */
function source(fpsNum: number, fpsDen: number, tbDen: number, seconds: number): SourceFrames {
  const n = Math.floor((seconds * fpsNum) / fpsDen);
  return {
    timeBase: { num: 1, den: tbDen },
    pts: Array.from({ length: n }, (_, i) => Math.round((i * fpsDen * tbDen) / fpsNum)),
    containerStart: 0,
  };
}

const round = (x: number) => Math.sign(x) * Math.round(Math.abs(x));

/** The frames (indices) ffmpeg keeps for -ss fromUs -to toUs. */
function kept(frames: SourceFrames, fromUs: number, toUs: number): number[] {
  const ticks = (us: number) => (us * frames.timeBase.den) / (1e6 * frames.timeBase.num);
  const offset = round(ticks(fromUs));
  const after = frames.pts.map((p, i) => ({ i, pts: p - offset })).filter((f) => f.pts >= 0);
  const duration = round(ticks(toUs - fromUs));
  return after.filter((f) => f.pts - after[0]!.pts < duration).map((f) => f.i);
}

const CASES = [
  { name: '30 fps in 1/15360', fps: [30, 1], tb: 15360 },
  { name: '25 fps in 1/12800', fps: [25, 1], tb: 12800 },
  { name: '29.97 fps in 1/30000', fps: [30000, 1001], tb: 30000 },
  { name: '60 fps in 1/90000', fps: [60, 1], tb: 90000 },
  { name: '24 fps in 1/1000 (Matroska)', fps: [24, 1], tb: 1000 },
] as const;

for (const c of CASES) {
  test(`${c.name}: each frame of the single pass in exactly one chunk, chunks on its keyframes, shifts exact`, (t) => {
    const frames = source(c.fps[0], c.fps[1], c.tb, 40);
    const fps = c.fps[0] / c.fps[1];
    const gop = Math.round(2 * fps);
    for (const [start, end] of [
      [1, 13],
      [1.23, 13.37],
      [0, 37.001],
      [2.5, 30],
    ] as const) {
      const single = kept(frames, secToUs(start), secToUs(end));
      for (const [chunks, firstChunkExtraShare] of [
        [2, 0],
        [3, 0],
        [5, 0],
        [2, 0.05],
        [3, 0.3],
      ] as const) {
        const cuts = planChunkCuts(frames, { start, end, chunks, gopFrames: gop, firstChunkExtraShare });
        if (!cuts) {
          t.true(Math.floor(single.length / gop) < chunks, `${start}-${end} in ${chunks}: refused although it has enough GOPs`);
          continue;
        }
        const parts = cuts.map((cut) => kept(frames, cut.fromUs, cut.toUs));
        t.deepEqual(parts.flat(), single, `${start}-${end} in ${chunks}`);
        t.true(
          parts.every((part) => part.length >= gop),
          'every chunk holds a keyframe interval at least',
        );
        for (const part of parts.slice(1)) t.is((part[0]! - single[0]!) % gop, 0, 'a chunk starts on a keyframe of the single pass');
        for (const cut of cuts) {
          const ticks = ((cut.fromUs - secToUs(start)) * c.tb) / 1e6;
          t.is(cut.shiftTicks, ticks, 'the shift is a whole number of ticks');
        }
      }
    }
  });
}

test('the first chunk, which also encodes the sound, gets that much less video; the others share the rest evenly', (t) => {
  const frames = source(30, 1, 15360, 70);
  const framesOf = (share: number) =>
    planChunkCuts(frames, { start: 0, end: 60, chunks: 2, gopFrames: 60, firstChunkExtraShare: share })!.map(
      (cut) => kept(frames, cut.fromUs, cut.toUs).length,
    );
  // 30 keyframe intervals: even halves without the sound; with it worth 5 % of the video (1.5
  // intervals), the first chunk renders 14 intervals and the second 16.
  t.deepEqual(framesOf(0), [900, 900]);
  t.deepEqual(framesOf(0.05), [840, 960]);
  t.deepEqual(framesOf(0.2), [720, 1080]);
  const three = planChunkCuts(frames, { start: 0, end: 60, chunks: 3, gopFrames: 60, firstChunkExtraShare: 0.1 })!.map(
    (cut) => kept(frames, cut.fromUs, cut.toUs).length,
  );
  t.deepEqual(three, [480, 660, 660]);
});

test('a render too short for two keyframe intervals a chunk is not cut', (t) => {
  const frames = source(30, 1, 15360, 10);
  t.is(planChunkCuts(frames, { start: 0, end: 3, chunks: 2, gopFrames: 60 }), null);
  t.not(planChunkCuts(frames, { start: 0, end: 4, chunks: 2, gopFrames: 60 }), null);
});

test('a variable frame rate is not cut (the constant-rate output would repeat or drop frames elsewhere in a chunk)', (t) => {
  const steady = source(30, 1, 90000, 20);
  t.not(planChunkCuts(steady, { start: 1, end: 13, chunks: 2, gopFrames: 60 }), null);
  // A phone's 30 fps: frames 33.2-33.5 ms apart.
  const phone = { ...steady, pts: steady.pts.map((p, i) => p + (i % 3 === 1 ? 30 : 0)) };
  t.is(planChunkCuts(phone, { start: 1, end: 13, chunks: 2, gopFrames: 60 }), null);
});
