// What reframing needs from a face detector, whichever model sits behind it.
import type { FaceDetection } from '@shorts/common/reframe/types';
import type { RgbImage } from './image.js';
import type { OnnxProvider } from './onnx-session.js';

export interface FaceDetector {
  /** Model name for logs and capabilities, e.g. "blazeface-back-256". */
  readonly name: string;
  /** Where inference runs. */
  readonly provider: OnnxProvider;
  /** Faces in each image, boxes and keypoints in that image's pixels. One call may carry several
   *  frames so a model with a free batch dimension can run them at once. */
  detect(images: RgbImage[], signal?: AbortSignal): Promise<FaceDetection[][]>;
  release(): Promise<void>;
}

/**
 * A detector whose calls run one at a time, in order. Its session and input buffer are shared by
 * all tasks of the agent; two analyses at once must not write the buffer under each other's
 * inference. Subclasses implement `detectNow` for one call.
 */
export abstract class SerialFaceDetector implements FaceDetector {
  abstract readonly name: string;
  abstract readonly provider: OnnxProvider;
  private tail: Promise<unknown> = Promise.resolve();

  detect(images: RgbImage[], signal?: AbortSignal): Promise<FaceDetection[][]> {
    const run = () => this.detectNow(images, signal);
    const next = this.tail.then(run, run);
    this.tail = next.catch(() => undefined);
    return next;
  }

  protected abstract detectNow(images: RgbImage[], signal?: AbortSignal): Promise<FaceDetection[][]>;
  abstract release(): Promise<void>;
}

/** Intersection over union of two boxes. */
export function iou(
  a: { x: number; y: number; width: number; height: number },
  b: { x: number; y: number; width: number; height: number },
): number {
  const ix = Math.max(0, Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x));
  const iy = Math.max(0, Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y));
  const inter = ix * iy;
  const union = a.width * a.height + b.width * b.height - inter;
  return union > 0 ? inter / union : 0;
}

/**
 * MediaPipe's weighted non-maximum suppression: the best-scoring face absorbs every other one that
 * overlaps it by more than `iouThreshold`, and the box and keypoints become their score-weighted
 * mean (steadier than keeping the single best anchor, which matters for a camera that follows it).
 */
export function weightedNms(faces: FaceDetection[], iouThreshold = 0.3): FaceDetection[] {
  const rest = [...faces].sort((a, b) => b.score - a.score);
  const out: FaceDetection[] = [];
  while (rest.length) {
    const best = rest[0]!;
    const group: FaceDetection[] = [];
    for (let i = rest.length - 1; i >= 0; i--) {
      if (i === 0 || iou(best, rest[i]!) > iouThreshold) group.push(rest.splice(i, 1)[0]!);
    }
    let total = 0;
    let x = 0,
      y = 0,
      w = 0,
      h = 0;
    const kps = best.keypoints.map(() => [0, 0] as [number, number]);
    for (const f of group) {
      total += f.score;
      x += f.x * f.score;
      y += f.y * f.score;
      w += f.width * f.score;
      h += f.height * f.score;
      f.keypoints.forEach((k, i) => {
        if (!kps[i]) return;
        kps[i]![0] += k[0] * f.score;
        kps[i]![1] += k[1] * f.score;
      });
    }
    out.push({
      x: x / total,
      y: y / total,
      width: w / total,
      height: h / total,
      score: best.score,
      keypoints: kps.map(([kx, ky]) => [kx / total, ky / total] as [number, number]),
    });
  }
  return out;
}
