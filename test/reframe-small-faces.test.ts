import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@shorts/common/logger';
import { detectShorts } from '../node-agent/src/reframe/detect-shorts.js';
import { sharedFaceDetector } from '../node-agent/src/reframe/detector-factory.js';
import { zoomTiles } from '../node-agent/src/reframe/zoom-pass.js';
import { gridClips } from './helpers/grid.js';
import { FFMPEG } from './helpers/media.js';
import { needing } from './helpers/requirements.js';
import { composeWideShot, measureRecall, type WideShotOptions } from './helpers/small-faces.js';

// Small faces on large sources: three GRID people in one wide shot, their faces 4-8 % of the frame's
// height, at 1080p and 4K, straight-on and turned; recall of the tracks `detectShorts` gives against
// where the faces are known to be.

const log = createLogger({}, 'silent');
const media = gridClips();
const withMedia = needing({ media: Boolean(media) });
let dir: string;

test.before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'small-faces-'));
});
test.after.always(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function recallOf(opts: WideShotOptions) {
  const shot = await composeWideShot(dir, opts);
  const detector = await sharedFaceDetector({ faceDetector: 'blazeface', faceDetectorModel: undefined }, log);
  const [result] = await detectShorts(
    {
      sourceFile: shot.videoPath,
      sourceWidth: shot.width,
      sourceHeight: shot.height,
      shorts: [{ start: 0, end: shot.durationSec }],
      wavPath: shot.wavPath,
      signal: new AbortController().signal,
    },
    { ffmpegPath: FFMPEG, detector, log },
  );
  const recall = measureRecall(result!, shot.faces);
  return { ...recall, result: result!, faces: shot.faces, share: recall.found.map((n) => n / recall.frames) };
}

test('zoomed tiles cover a 640x360 frame in overlapping rows and columns', (t) => {
  const tiles = zoomTiles(640, 360, 198, 36);
  t.deepEqual([...new Set(tiles.map((r) => r.y))], [0, 162]);
  t.deepEqual([...new Set(tiles.map((r) => r.x))], [0, 147, 295, 442]);
  t.true(tiles.every((r) => r.x + r.width <= 640 && r.y + r.height <= 360));
});

for (const [label, width, height] of [
  ['1080p', 1920, 1080],
  ['4K', 3840, 2160],
] as const) {
  const name = `three small faces of a ${label} wide shot are tracked: 95 % of frames from 5 % of the height, 80 % at 4 %, almost no false faces`;
  withMedia(name, async (t) => {
    const r = await recallOf({ width, height, fractions: [0.04, 0.05, 0.08] });
    t.log(
      r.faces
        .map(
          (f, k) => `${(100 * f.fraction).toFixed(0)} % of the height: found in ${(100 * r.share[k]!).toFixed(0)} % of ${r.frames} frames`,
        )
        .join('; '),
      `false faces a frame: ${r.falsePerFrame.toFixed(3)}`,
    );
    r.faces.forEach((f, k) => t.true(r.share[k]! >= (f.fraction >= 0.05 ? 0.95 : 0.8), `face at ${f.fraction * 100} %: ${r.share[k]}`));
    t.true(r.falsePerFrame <= 0.05);
  });
}

const turnedName = 'turned faces at 4 % of a 1080p frame (narrowed, keystoned, tilted 12-18 degrees) are tracked in 80 % of frames';
withMedia(turnedName, async (t) => {
  // What the detector reaches on imitated turns; heads tilted 30 degrees and more, narrowed to 40 %,
  // are found in about half the frames (see bench/small-faces.ts), and a true profile not at all.
  const r = await recallOf({
    width: 1920,
    height: 1080,
    fractions: [0.04, 0.04, 0.04],
    turned: true,
    turn: { narrow: 0.55, keystone: 0.2, tilt: 1.5 },
  });
  t.log(
    r.faces.map((f, k) => `${(100 * f.fraction).toFixed(0)} %: ${(100 * r.share[k]!).toFixed(0)} %`).join('; '),
    `false faces a frame: ${r.falsePerFrame.toFixed(3)}`,
  );
  r.share.forEach((share, k) => t.true(share >= 0.8, `turned face ${k + 1}: found in ${share}`));
  t.true(r.falsePerFrame <= 0.05);
});

withMedia(
  'a cut in the picture behind a panel who stay where they are is no shot change: each person is one track across it',
  async (t) => {
    const r = await recallOf({ width: 1920, height: 1080, fractions: [0.06, 0.07, 0.08], seconds: 4, backdropCutAt: 2 });
    t.deepEqual(
      r.result.shots?.map((s) => s.transition),
      ['start'],
      `shots at ${r.result.shots?.map((s) => s.start).join(', ')}`,
    );
    // Each face is one track over (nearly) the whole short, not one before the cut and one after.
    for (const face of r.faces) {
      const own = r.result.tracks.filter((track) => {
        const mid = track.samples[track.samples.length >> 1]!.box;
        return Math.abs(mid.x + mid.width / 2 - face.cx) < face.height / 2 && Math.abs(mid.y + mid.height / 2 - face.cy) < face.height / 2;
      });
      t.is(own.length, 1, `the face at ${Math.round(face.cx)},${Math.round(face.cy)} is ${own.length} tracks`);
      const span = own[0] ? own[0].samples.at(-1)!.time - own[0].samples[0]!.time : 0;
      t.true(span >= 3.5, `its track spans ${span.toFixed(2)} s of 4`);
    }
  },
);
