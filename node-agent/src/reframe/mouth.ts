// Mouth activity: how much the mouth region changes between two samples of the same face, beyond
// what the rest of the face does. Patches are cut relative to the face's own box and keypoints (so a
// face that moves, turns a little or is zoomed keeps the same patch), normalised for brightness and
// contrast, and compared at the best small shift (so detector jitter of a pixel or two is not
// motion). The same measure over a rigid part of the face (the nose bridge, between the eyes and the
// nose tip, below the blinking eyes) is subtracted: a nod or a sway changes both, speech only the mouth.
import type { FaceDetection } from '@shorts/common/reframe/types';
import { greyPatch, type RgbImage } from './image.js';

/** Patch grid: an inner area compared, plus a margin of pixels for the shift search. */
export const MOUTH = { w: 24, h: 16, margin: 3 } as const;
export const RIGID = { w: 24, h: 10, margin: 3 } as const;
/** A change of openness between two samples, in units of activity (talking faces: activity about
 *  2-2.5 times the change of openness, measured on the GRID speakers). */
const OPENNESS_TO_ACTIVITY = 2;
/** Talking faces measure up to about 0.4 between samples, their rigid part up to about 0.3. */
const RIGID_CHANGED = 1;
const MAX_ACTIVITY = 0.6;

export interface FacePatches {
  mouth: Float32Array;
  rigid: Float32Array;
}

/** Keypoints, BlazeFace order: right eye, left eye, nose tip, mouth centre, right ear, left ear. */
function faceGeometry(face: FaceDetection): { size: number; mouth: [number, number]; bridge: [number, number] } {
  const [re, le, nose, mouth] = face.keypoints;
  const size = face.width;
  const m: [number, number] = mouth ?? [face.x + face.width / 2, face.y + face.height * 0.78];
  const n: [number, number] = nose ?? [face.x + face.width / 2, face.y + face.height * 0.55];
  const eyesY = re && le ? (re[1] + le[1]) / 2 : face.y + face.height * 0.35;
  // Between the eye line and the nose tip, nearer the nose: no eyelids in it.
  return { size, mouth: m, bridge: [n[0], eyesY + (n[1] - eyesY) * 0.6] };
}

/** Cuts the mouth and rigid patches of one detected face from the frame it was found in. */
export function cutFacePatches(img: RgbImage, face: FaceDetection): FacePatches {
  const g = faceGeometry(face);
  const cut = (centre: [number, number], wFrac: number, grid: { w: number; h: number; margin: number }) => {
    const w = wFrac * g.size;
    const px = w / grid.w; // source pixels per patch pixel
    const fullW = (grid.w + 2 * grid.margin) * px;
    const fullH = (grid.h + 2 * grid.margin) * px;
    return normalise(
      greyPatch(
        img,
        { x: centre[0] - fullW / 2, y: centre[1] - fullH / 2, width: fullW, height: fullH },
        grid.w + 2 * grid.margin,
        grid.h + 2 * grid.margin,
      ),
    );
  };
  // The mouth region takes in the lips and the chin's movement; the rigid one spans both cheeks.
  return { mouth: cut([g.mouth[0], g.mouth[1] + 0.04 * g.size], 0.55, MOUTH), rigid: cut(g.bridge, 0.55, RIGID) };
}

/** Zero mean, unit spread: lighting and exposure changes are not motion. */
function normalise(p: Float32Array): Float32Array {
  let mean = 0;
  for (const v of p) mean += v;
  mean /= p.length;
  let variance = 0;
  for (const v of p) variance += (v - mean) ** 2;
  // A floor on the spread so a flat patch (a blank wall misread as a face) does not amplify noise.
  const sd = Math.max(8, Math.sqrt(variance / p.length));
  for (let i = 0; i < p.length; i++) p[i] = (p[i]! - mean) / sd;
  return p;
}

/** Mean absolute difference of the inner areas at the best shift within the margin. */
function shiftedDifference(prev: Float32Array, cur: Float32Array, grid: { w: number; h: number; margin: number }): number {
  const stride = grid.w + 2 * grid.margin;
  let best = Infinity;
  for (let dy = -grid.margin; dy <= grid.margin; dy++) {
    for (let dx = -grid.margin; dx <= grid.margin; dx++) {
      let sum = 0;
      for (let y = 0; y < grid.h; y++) {
        const rc = (y + grid.margin) * stride + grid.margin;
        const rp = (y + grid.margin + dy) * stride + grid.margin + dx;
        for (let x = 0; x < grid.w; x++) sum += Math.abs(cur[rc + x]! - prev[rp + x]!);
        if (sum >= best * grid.w * grid.h) break;
      }
      best = Math.min(best, sum / (grid.w * grid.h));
    }
  }
  return best;
}

/**
 * How open the mouth is in one sample: the share of the mouth patch's middle that is dark (a
 * standard deviation below the patch's mean), where an open mouth shows its cavity and a closed one
 * only the line between the lips. Unlike mouthActivity it is a state, not a change, so it rises and
 * falls with the syllables as the voice's loudness does: a mouth that moves as much but out of step
 * with the voice correlates with it far less (lipSync in speakers.ts). The level differs between
 * faces (a beard, dark lips); only its ups and downs are used.
 */
export function mouthOpenness(patches: FacePatches): number {
  const { w, h, margin } = MOUTH;
  const stride = w + 2 * margin;
  let dark = 0;
  let count = 0;
  // The middle half of the width and the rows between the nose's shadow and the chin.
  for (let y = Math.round(h * 0.2); y < Math.round(h * 0.8); y++) {
    for (let x = Math.round(w * 0.25); x < Math.round(w * 0.75); x++) {
      if (patches.mouth[(y + margin) * stride + x + margin]! < -1) dark++;
      count++;
    }
  }
  return dark / count;
}

/** Whether two samples' faces look alike where a face keeps still (between the eyes and the nose
 *  tip), compared as mouthActivity compares them: one person's face across a cut behind them, not
 *  another person's in the same place. */
export function sameFaceLook(prev: FacePatches, cur: FacePatches): boolean {
  return shiftedDifference(prev.rigid, cur.rigid, RIGID) <= RIGID_CHANGED;
}

/** Mouth motion beyond the face's rigid motion between two samples (0 when the mouth is still). */
export function mouthActivity(prev: FacePatches, cur: FacePatches): number {
  const mouth = shiftedDifference(prev.mouth, cur.mouth, MOUTH);
  const rigid = shiftedDifference(prev.rigid, cur.rigid, RIGID);
  // When the rigid part itself changed beyond recognition (the head turned between the samples, or
  // a hand passed over the face; a cut ends the track before this), the two patches cannot be
  // compared pixel by pixel. How open the mouth is, measured on each sample alone, still says
  // whether it moved: a speaker who turns their head keeps talking in the evidence.
  if (rigid > RIGID_CHANGED) return Math.min(MAX_ACTIVITY, OPENNESS_TO_ACTIVITY * Math.abs(mouthOpenness(cur) - mouthOpenness(prev)));
  // Speech moves the cheeks and the whole face a little too, so only half the rigid change is taken
  // off: enough to cancel a nod or a sway, not so much that a talking face cancels itself.
  return Math.min(MAX_ACTIVITY, Math.max(0, mouth - 0.5 * rigid));
}
