// Stronger face detectors that do not ship with npm, for hosts where BlazeFace misses faces (small,
// profile, low light): SCRFD (insightface; e.g. scrfd_2.5g_bnkps.onnx) and YuNet (OpenCV zoo;
// face_detection_yunet_2023mar.onnx), placed in models/ and chosen with FACE_DETECTOR. Both predict on
// stride-8/16/32 grids over a 640x640 input; the frame is letterboxed into it (top-left, black pad).
//
// Their five keypoints are the eyes, the nose tip and the two mouth corners; reframing's keypoints
// follow BlazeFace (eyes, nose, mouth centre, ears), so the mouth centre is the corners' midpoint and
// the ears are put at the box's sides at eye height.
import type * as OnnxRuntime from 'onnxruntime-node';
import type { InferenceSession, Tensor } from 'onnxruntime-node';
import type { FaceDetection } from '@shorts/common/reframe/types';
import type { Logger } from '@shorts/common/logger';
import { SerialFaceDetector, weightedNms, type FaceDetector } from './face-detector.js';
import { regionToTensor, type RgbImage } from './image.js';
import { createOnnxSession, type OnnxProvider } from './onnx-session.js';

const STRIDES = [8, 16, 32] as const;
const INPUT = 640;

type Kind = 'scrfd' | 'yunet';

/** Raw outputs of one stride: per grid position (and anchor), the numbers each head gives. */
export interface StrideOutputs {
  stride: number;
  /** SCRFD: sigmoid scores; YuNet: class scores (multiplied with `objectness`). */
  scores: ArrayLike<number>;
  objectness?: ArrayLike<number>;
  boxes: ArrayLike<number>;
  keypoints: ArrayLike<number>;
}

function toReframeKeypoints(five: Array<[number, number]>, box: { x: number; width: number }): Array<[number, number]> {
  const [re, le, nose, mouthA, mouthB] = five as [[number, number], [number, number], [number, number], [number, number], [number, number]];
  const eyeY = (re[1] + le[1]) / 2;
  return [re, le, nose, [(mouthA[0] + mouthB[0]) / 2, (mouthA[1] + mouthB[1]) / 2], [box.x, eyeY], [box.x + box.width, eyeY]];
}

/** SCRFD: two anchors per grid point at (col*stride, row*stride); boxes are distances to the four
 *  sides in strides; keypoints offsets in strides. Coordinates in input pixels. */
export function decodeScrfd(outputs: StrideOutputs[], inputSize: number, minScore: number): FaceDetection[] {
  const faces: FaceDetection[] = [];
  for (const o of outputs) {
    const cols = Math.ceil(inputSize / o.stride);
    const n = o.scores.length;
    for (let i = 0; i < n; i++) {
      const score = o.scores[i]!;
      if (score < minScore) continue;
      const cell = Math.floor(i / 2);
      const cx = (cell % cols) * o.stride;
      const cy = Math.floor(cell / cols) * o.stride;
      const b = i * 4;
      const x1 = cx - o.boxes[b]! * o.stride;
      const y1 = cy - o.boxes[b + 1]! * o.stride;
      const x2 = cx + o.boxes[b + 2]! * o.stride;
      const y2 = cy + o.boxes[b + 3]! * o.stride;
      const five: Array<[number, number]> = [];
      for (let k = 0; k < 5; k++)
        five.push([cx + o.keypoints[i * 10 + 2 * k]! * o.stride, cy + o.keypoints[i * 10 + 2 * k + 1]! * o.stride]);
      const box = { x: x1, y: y1, width: x2 - x1, height: y2 - y1 };
      faces.push({ ...box, score, keypoints: toReframeKeypoints(five, box) });
    }
  }
  return faces;
}

/** YuNet (2023mar): one prediction per grid cell; score sqrt(cls*obj); centre offset in strides, size
 *  as log strides (OpenCV's FaceDetectorYN decoding). Coordinates in input pixels. */
export function decodeYunet(outputs: StrideOutputs[], inputSize: number, minScore: number): FaceDetection[] {
  const faces: FaceDetection[] = [];
  const clamp = (v: number) => Math.min(1, Math.max(0, v));
  for (const o of outputs) {
    const cols = Math.ceil(inputSize / o.stride);
    const n = o.scores.length;
    for (let i = 0; i < n; i++) {
      const score = Math.sqrt(clamp(o.scores[i]!) * clamp(o.objectness?.[i] ?? 1));
      if (score < minScore) continue;
      const c = i % cols;
      const r = Math.floor(i / cols);
      const b = i * 4;
      const cx = (c + o.boxes[b]!) * o.stride;
      const cy = (r + o.boxes[b + 1]!) * o.stride;
      const w = Math.exp(o.boxes[b + 2]!) * o.stride;
      const h = Math.exp(o.boxes[b + 3]!) * o.stride;
      const five: Array<[number, number]> = [];
      for (let k = 0; k < 5; k++)
        five.push([(c + o.keypoints[i * 10 + 2 * k]!) * o.stride, (r + o.keypoints[i * 10 + 2 * k + 1]!) * o.stride]);
      const box = { x: cx - w / 2, y: cy - h / 2, width: w, height: h };
      faces.push({ ...box, score, keypoints: toReframeKeypoints(five, box) });
    }
  }
  return faces;
}

/** Output tensors by head and stride, found by name (YuNet: cls_8 …; SCRFD exports name them by
 *  number, so there by order: scores, boxes, keypoints, each for strides 8, 16, 32). */
function groupOutputs(kind: Kind, names: readonly string[], out: Record<string, Tensor>): StrideOutputs[] {
  const data = (name: string) => out[name]!.data as Float32Array;
  if (kind === 'yunet') {
    return STRIDES.map((s) => ({
      stride: s,
      scores: data(`cls_${s}`),
      objectness: data(`obj_${s}`),
      boxes: data(`bbox_${s}`),
      keypoints: data(`kps_${s}`),
    }));
  }
  if (names.length !== 9) throw new Error(`SCRFD model with keypoints expected (9 outputs), got ${names.length}`);
  return STRIDES.map((s, i) => ({ stride: s, scores: data(names[i]!), boxes: data(names[i + 3]!), keypoints: data(names[i + 6]!) }));
}

class AnchorFreeDetector extends SerialFaceDetector {
  private readonly hwc = new Float32Array(INPUT * INPUT * 3);
  private readonly chw = new Float32Array(INPUT * INPUT * 3);

  constructor(
    private readonly ort: typeof OnnxRuntime,
    private readonly kind: Kind,
    private readonly session: InferenceSession,
    readonly provider: OnnxProvider,
    readonly name: string,
    private readonly minScore = 0.5,
  ) {
    super();
  }

  protected async detectNow(images: RgbImage[], signal?: AbortSignal): Promise<FaceDetection[][]> {
    const results: FaceDetection[][] = [];
    for (const img of images) {
      signal?.throwIfAborted();
      // Letterbox: the long side fills the input, the rest reads as black.
      const scale = INPUT / Math.max(img.width, img.height);
      const side = INPUT / scale;
      // SCRFD: RGB, (v - 127.5) / 128. YuNet: BGR, 0..255.
      const [mul, add] = this.kind === 'scrfd' ? [1 / 128, -127.5 / 128] : [1, 0];
      regionToTensor(img, { x: 0, y: 0, width: side, height: side }, INPUT, INPUT, this.hwc, mul, add);
      const plane = INPUT * INPUT;
      const order = this.kind === 'yunet' ? [2, 1, 0] : [0, 1, 2];
      for (let p = 0; p < plane; p++) for (let c = 0; c < 3; c++) this.chw[c * plane + p] = this.hwc[p * 3 + order[c]!]!;
      const out = await this.session.run({ [this.session.inputNames[0]!]: new this.ort.Tensor('float32', this.chw, [1, 3, INPUT, INPUT]) });
      const decode = this.kind === 'scrfd' ? decodeScrfd : decodeYunet;
      const faces = decode(groupOutputs(this.kind, this.session.outputNames, out), INPUT, this.minScore).map((f) => ({
        x: f.x / scale,
        y: f.y / scale,
        width: f.width / scale,
        height: f.height / scale,
        score: f.score,
        keypoints: f.keypoints.map(([x, y]) => [x / scale, y / scale] as [number, number]),
      }));
      results.push(weightedNms(faces, 0.4));
    }
    return results;
  }

  async release(): Promise<void> {
    await this.session.release();
  }
}

export async function createAnchorFreeDetector(kind: Kind, modelPath: string, log: Logger, threads = 1): Promise<FaceDetector> {
  const ort = await import('onnxruntime-node');
  const { session, provider } = await createOnnxSession(modelPath, { log, threads });
  if (kind === 'yunet' && !session.outputNames.includes('cls_8')) {
    throw new Error(`${modelPath} is not a YuNet 2023mar model (outputs: ${session.outputNames.join(', ')})`);
  }
  return new AnchorFreeDetector(ort, kind, session, provider, `${kind}-${INPUT}`);
}
