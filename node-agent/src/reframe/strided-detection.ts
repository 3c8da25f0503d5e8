// The detector runs on every `stride`-th sampled frame; the frames between get faces interpolated
// from the detections on either side (matched as the tracker matches them). Faces move little in a
// quarter second, so the mouth analysis, which needs every frame, keeps its rate while detection, by
// far the costliest step, runs at a fraction of it.
import type { FaceDetection } from '@shorts/common/reframe/types';
import type { FaceDetector } from './face-detector.js';
import type { SampledFrame } from './frames.js';
import { matchFaces } from './tracks.js';

export interface FramesWithFaces {
  frame: SampledFrame;
  faces: FaceDetection[];
  /** False when the faces were interpolated rather than detected in this frame. */
  detected: boolean;
}

function lerpFace(a: FaceDetection, b: FaceDetection, f: number): FaceDetection {
  const mix = (x: number, y: number) => x + (y - x) * f;
  return {
    x: mix(a.x, b.x),
    y: mix(a.y, b.y),
    width: mix(a.width, b.width),
    height: mix(a.height, b.height),
    score: Math.min(a.score, b.score),
    keypoints: a.keypoints.map(
      (k, i) => [mix(k[0], b.keypoints[i]?.[0] ?? k[0]), mix(k[1], b.keypoints[i]?.[1] ?? k[1])] as [number, number],
    ),
  };
}

/** Faces of frames between two detected ones: matched faces interpolated; a face seen on one side
 *  only is kept where it was seen, for the half of the gap nearer to that side. */
export function interpolateFaces(
  before: { time: number; faces: FaceDetection[] },
  after: { time: number; faces: FaceDetection[] },
  time: number,
): FaceDetection[] {
  const f = (time - before.time) / Math.max(1e-9, after.time - before.time);
  const pairs = matchFaces(before.faces, after.faces, after.time - before.time);
  const out: FaceDetection[] = [];
  const usedBefore = new Set<number>();
  const usedAfter = new Set<number>();
  for (const [i, j] of pairs) {
    usedBefore.add(i);
    usedAfter.add(j);
    out.push(lerpFace(before.faces[i]!, after.faces[j]!, f));
  }
  if (f <= 0.5) before.faces.forEach((face, i) => usedBefore.has(i) || out.push(face));
  else after.faces.forEach((face, j) => usedAfter.has(j) || out.push(face));
  return out;
}

/**
 * Faces of every frame, detected on every `stride`-th one and interpolated between. `changesShot`
 * (asked of each frame in order) marks a frame that may start a new shot: the frames on both sides of
 * it are detected, and no face is interpolated across it.
 */
export async function* detectStrided(
  frames: AsyncIterable<SampledFrame>,
  detector: FaceDetector,
  stride: number,
  signal?: AbortSignal,
  onDetect?: (ms: number) => void,
  changesShot?: (frame: SampledFrame) => boolean,
): AsyncGenerator<FramesWithFaces> {
  let last: { frame: SampledFrame; faces: FaceDetection[] } | undefined;
  let pending: SampledFrame[] = [];
  const detect = async (frame: SampledFrame) => {
    const t0 = performance.now();
    const [faces = []] = await detector.detect([frame.image], signal);
    onDetect?.(performance.now() - t0);
    return faces;
  };
  function* flush(next: { frame: SampledFrame; faces: FaceDetection[] }): Generator<FramesWithFaces> {
    for (const p of pending) {
      const faces = last
        ? interpolateFaces({ time: last.frame.time, faces: last.faces }, { time: next.frame.time, faces: next.faces }, p.time)
        : next.faces;
      yield { frame: p, faces, detected: false };
    }
    pending = [];
    yield { frame: next.frame, faces: next.faces, detected: true };
    last = next;
  }
  let index = 0;
  for await (const frame of frames) {
    if (changesShot?.(frame)) {
      // Close the old shot on a detected frame, then start the new one from nothing.
      const tail = pending.pop();
      if (tail) yield* flush({ frame: tail, faces: await detect(tail) });
      last = undefined;
      index = 0;
    }
    if (index++ % stride === 0) yield* flush({ frame, faces: await detect(frame) });
    else pending.push(frame);
  }
  // The range's last frame is always detected, so no frame is left extrapolated.
  const tail = pending.pop();
  if (tail) yield* flush({ frame: tail, faces: await detect(tail) });
}
