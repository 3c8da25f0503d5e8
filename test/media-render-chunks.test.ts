import test from 'ava';
import { OVERRUN_FRAMES, planChunkCuts, secToUs, type SourceFrames } from '../node-agent/src/media/render-chunks.js';

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

/** What the encoder's constant-rate output shows of them when they start at -ss fromUs: the slots
 *  before the first frame's own filled with copies of it (ffmpeg's vsync cfr: llrint(1 + lead) - 1
 *  copies once the lead passes 0.1 of a frame). Only the single pass and the first chunk start on
 *  the clip's clock; later chunks are shifted to start at 0. */
function encoded(frames: SourceFrames, fromUs: number, toUs: number): number[] {
  const ticks = (us: number) => (us * frames.timeBase.den) / (1e6 * frames.timeBase.num);
  const list = kept(frames, fromUs, toUs);
  const step = frames.pts[1]! - frames.pts[0]!;
  const lead = (frames.pts[list[0]!]! - round(ticks(fromUs))) / step;
  const copies = lead > 0.1 ? Math.round(1 + lead) - 1 : 0;
  return [...Array<number>(copies).fill(list[0]!), ...list];
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
      const single = encoded(frames, secToUs(start), secToUs(end));
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
        // Each chunk but the last runs on OVERRUN_FRAMES into the next and keeps its own frames only.
        const rendered = cuts.map((cut, k) => (k === 0 ? encoded : kept)(frames, cut.fromUs, cut.toUs));
        const parts = rendered.map((part, k) => part.slice(0, cuts[k]!.keepFrames ?? part.length));
        t.deepEqual(parts.flat(), single, `${start}-${end} in ${chunks}`);
        rendered
          .slice(0, -1)
          .forEach((part, k) =>
            t.deepEqual(part.slice(parts[k]!.length), rendered[k + 1]!.slice(0, OVERRUN_FRAMES), 'runs on into the next chunk'),
          );
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
      (cut) => cut.keepFrames ?? kept(frames, cut.fromUs, cut.toUs).length,
    );
  // 30 keyframe intervals: even halves without the sound; with it worth 5 % of the video (1.5
  // intervals), the first chunk renders 14 intervals and the second 16.
  t.deepEqual(framesOf(0), [900, 900]);
  t.deepEqual(framesOf(0.05), [840, 960]);
  t.deepEqual(framesOf(0.2), [720, 1080]);
  const three = planChunkCuts(frames, { start: 0, end: 60, chunks: 3, gopFrames: 60, firstChunkExtraShare: 0.1 })!.map(
    (cut) => cut.keepFrames ?? kept(frames, cut.fromUs, cut.toUs).length,
  );
  t.deepEqual(three, [480, 660, 660]);
});

test('the last, partial keyframe interval counts as the work it is: a 45 s render in two is cut at 22 s, not 20 s', (t) => {
  const frames = source(30, 1, 15360, 50);
  const framesOf = (share: number, chunks = 2) =>
    planChunkCuts(frames, { start: 0, end: 45, chunks, gopFrames: 60, firstChunkExtraShare: share })!.map(
      (cut) => cut.keepFrames ?? kept(frames, cut.fromUs, cut.toUs).length,
    );
  // 22.5 keyframe intervals. With the sound (5 %: 1.125 of them), 23.625 of work: 11.8 each, so the
  // first chunk renders 11 intervals (660 frames) and the second 690; counted as 22 whole intervals,
  // the first rendered 10 (600) and the second 750, and the render waited for the second.
  t.deepEqual(framesOf(0.05), [660, 690]);
  // In three: 7.875 intervals of work each; counted whole, the last got 8.5 (510 frames).
  t.deepEqual(framesOf(0.05, 3), [420, 480, 450]);
});

test("each chunk gets video in proportion to its agent's measured speed, the sound's chunk its share less", (t) => {
  const frames = source(30, 1, 15360, 70);
  const framesOf = (speeds: number[], share = 0, chunks = speeds.length) =>
    planChunkCuts(frames, { start: 0, end: 60, chunks, gopFrames: 60, firstChunkExtraShare: share, speeds })!.map(
      (cut) => cut.keepFrames ?? kept(frames, cut.fromUs, cut.toUs).length,
    );
  // 30 keyframe intervals. A second agent half as fast again: 12 and 18 of them, so both end together.
  t.deepEqual(framesOf([1, 1.5]), [720, 1080]);
  t.deepEqual(framesOf([1.5, 1]), [1080, 720]);
  // With the sound (5 %: 1.5 intervals at the first agent's speed): 31.5 of work, 12.6 + 18.9.
  t.deepEqual(framesOf([1, 1.5], 0.05), [660, 1140]);
  t.deepEqual(framesOf([1, 1, 1]), [600, 600, 600], 'all alike: even thirds');
  t.deepEqual(framesOf([1, 1]), framesOf([], 0, 2), 'equal speeds cut as no speeds');
  // A host 20 times slower still keeps one interval; the others share the rest in whole intervals.
  t.deepEqual(framesOf([0.05, 1, 1]), [60, 840, 900]);
  // Nonsense speeds count as alike.
  t.deepEqual(framesOf([0, Number.NaN]), [900, 900]);
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

test('with jump cuts only the kept frames are counted, and a cut between two kept frames across a jump cut lies in the removed stretch', (t) => {
  const frames = source(30, 1, 15360, 20);
  // Kept: 0-4 s and 7-15 s of the clip; 4-7 s is cut away.
  const keep = [
    { start: 0, end: 4 },
    { start: 7, end: 15 },
  ];
  const cuts = planChunkCuts(frames, { start: 0, end: 15, chunks: 2, gopFrames: 60, keep, fps: 30 })!;
  t.is(cuts.length, 2);
  // 360 kept frames, 6 GOPs: the second chunk starts at kept frame 180 (6 s of edited time), which is
  // 2 s into the second kept range, at 9 s of the source.
  t.true(Math.abs(cuts[1]!.fromUs - 9e6) < 1e6 / 30, `cut at ${cuts[1]!.fromUs} us`);
  t.is(cuts[1]!.clockUs, 6e6);
  // Three chunks of two GOPs: the second starts on the first kept frame after the jump cut (4 s of
  // edited time), so its cut lies in the removed stretch.
  const early = planChunkCuts(frames, { start: 0, end: 15, chunks: 3, gopFrames: 60, keep, fps: 30 })!;
  t.deepEqual(
    early.map((c) => c.clockUs),
    [0, 4e6, 8e6],
  );
  t.true(early[1]!.fromUs > 4e6 && early[1]!.fromUs <= 7e6, 'between the last frame before the jump cut and the first after it');
});

test('a variable frame rate put on a constant rate is cut between output frames, each chunk showing the frames the one pass shows', (t) => {
  const steady = source(30, 1, 90000, 20);
  // Every fifth frame dropped: 24 fps on average, frames 1/30 or 2/30 s apart.
  const phone = { ...steady, pts: steady.pts.filter((_, i) => i % 5 !== 2) };
  t.is(planChunkCuts(phone, { start: 1, end: 13, chunks: 2, gopFrames: 60 }), null, 'not without the constant rate');
  const cuts = planChunkCuts(phone, { start: 1, end: 13, chunks: 2, gopFrames: 60, constantRate: 30 })!;
  t.is(cuts.length, 2);
  t.deepEqual(cuts[0]!.slots, { from: 0, to: 180 + OVERRUN_FRAMES });
  t.is(cuts[0]!.keepFrames, 180);
  t.deepEqual(cuts[1]!.slots, { from: 180 });
  t.is(cuts[1]!.clockUs, 6e6);
  // Output frame 180 (7 s of source) shows the last frame at or before it: source frame 210 (kept).
  t.true(Math.abs(cuts[1]!.fromUs - secToUs(7) + 1e6 / 60) < 1e6 / 60 + 1, `cut at ${cuts[1]!.fromUs}`);
});
