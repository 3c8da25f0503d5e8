// Small faces: at the analysis size (360 px short side) a face of 4 % of the frame's height is some
// 14 px, and the detector's full-height tiles shrink it to 10 px in a 256 px input. Frontal faces
// still come out down to about 3 %, but a turned face (narrower, tilted) or anything smaller does
// not. Zoomed in, the same pixels are found: tiles of half the frame's height bring such a face to
// 20 px of model input. That costs several model runs a frame, so it runs rarely: only when the
// normal pass finds no large face (a close-up or a two-person shot needs no help), and then once a
// second; on the detected frames between, only the places where it found small faces are looked at
// again, packed 2x2 into one model input.
import type { FaceDetection } from '@shorts/common/reframe/types';
import { cutByInnerEdge } from './blazeface.js';
import type { FaceDetector } from './face-detector.js';
import { iou, weightedNms } from './face-detector.js';
import { regionToTensor, type Region, type RgbImage } from './image.js';

export interface ZoomPassOptions {
  /** A face at least this fraction of the frame's height is large: the normal pass finds it, and a
   *  shot with one is framed on it, so no zoomed pass runs. */
  largeFace: number;
  /** Detector runs from one zoomed pass to the next (4 = once a second at 4 detections a second). */
  every: number;
  /** Zoomed tiles' side as a fraction of the frame's short side. */
  tileSide: number;
  /** Side of each cell of the 2x2 mosaic the known small faces are looked at again in. */
  cell: number;
  /** A known face's crop is this many times its height (room for a quarter second of movement). */
  cropFaces: number;
}

export const DEFAULT_ZOOM_PASS: ZoomPassOptions = { largeFace: 0.12, every: 4, tileSide: 0.55, cell: 128, cropFaces: 5 };

/** Square tiles of `side` covering the frame in rows and columns, neighbours overlapping by at least
 *  `overlap` px (a small face is then whole in some tile). */
export function zoomTiles(width: number, height: number, side: number, overlap: number): Region[] {
  const positions = (length: number) => {
    if (length <= side) return [0];
    const n = Math.ceil((length - side) / (side - overlap)) + 1;
    return Array.from({ length: n }, (_, i) => Math.round((i * (length - side)) / (n - 1)));
  };
  return positions(height).flatMap((y) => positions(width).map((x) => ({ x, y, width: side, height: side })));
}

/** `region` of `img` resampled to `side`x`side` at (`dx`, `dy`) of `into`. */
function drawRegion(img: RgbImage, region: Region, into: RgbImage, dx: number, dy: number, side: number, scratch: Float32Array): void {
  regionToTensor(img, region, side, side, scratch, 1, 0);
  for (let y = 0; y < side; y++) {
    const row = ((dy + y) * into.width + dx) * 3;
    for (let i = 0; i < side * 3; i++) into.data[row + i] = Math.round(scratch[y * side * 3 + i]!);
  }
}

function mapBack(face: FaceDetection, from: Region, to: Region): FaceDetection {
  const s = to.width / from.width;
  return {
    x: to.x + (face.x - from.x) * s,
    y: to.y + (face.y - from.y) * s,
    width: face.width * s,
    height: face.height * s,
    score: face.score,
    keypoints: face.keypoints.map(([kx, ky]) => [to.x + (kx - from.x) * s, to.y + (ky - from.y) * s] as [number, number]),
  };
}

const inside = (f: FaceDetection, r: Region) =>
  f.x >= r.x && f.y >= r.y && f.x + f.width <= r.x + r.width && f.y + f.height <= r.y + r.height;

/**
 * A detector with the zoomed pass around it, for the frames of one short in order (it remembers the
 * small faces it found). Counts its model inputs in `zoomedInputs`, for the benchmark.
 */
export class ZoomPassDetector implements FaceDetector {
  readonly name: string;
  readonly provider: FaceDetector['provider'];
  private runs = 0;
  private small: FaceDetection[] = [];
  zoomedInputs = 0;

  constructor(
    private readonly inner: FaceDetector,
    private readonly options: ZoomPassOptions = DEFAULT_ZOOM_PASS,
  ) {
    this.name = inner.name;
    this.provider = inner.provider;
  }

  async detect(images: RgbImage[], signal?: AbortSignal): Promise<FaceDetection[][]> {
    const normal = await this.inner.detect(images, signal);
    const out: FaceDetection[][] = [];
    for (const [i, img] of images.entries()) out.push(await this.withSmallFaces(img, normal[i] ?? [], signal));
    return out;
  }

  private async withSmallFaces(img: RgbImage, found: FaceDetection[], signal?: AbortSignal): Promise<FaceDetection[]> {
    const o = this.options;
    const due = this.runs++ % o.every === 0;
    if (found.some((f) => f.height >= o.largeFace * img.height)) {
      this.small = [];
      return found;
    }
    const extra = due ? await this.zoomedTiles(img, signal) : this.small.length ? await this.aroundKnown(img, signal) : [];
    // Small faces the normal pass missed are what the next frames look at again.
    this.small = weightedNms(extra).filter((f) => !found.some((g) => iou(f, g) > 0.3));
    return found.length ? weightedNms([...found, ...extra]) : weightedNms(extra);
  }

  private async zoomedTiles(img: RgbImage, signal?: AbortSignal): Promise<FaceDetection[]> {
    const short = Math.min(img.width, img.height);
    const side = Math.round(this.options.tileSide * short);
    // Overlap enough for the faces the zoom is for (under a tenth of the height; the normal pass
    // finds the larger ones): at 360 px two rows of four tiles.
    const tiles = zoomTiles(img.width, img.height, side, Math.round(0.1 * short));
    const crops = tiles.map((t) => {
      const crop: RgbImage = { width: side, height: side, data: new Uint8Array(side * side * 3) };
      for (let y = 0; y < side; y++)
        crop.data.set(img.data.subarray(((t.y + y) * img.width + t.x) * 3, ((t.y + y) * img.width + t.x + side) * 3), y * side * 3);
      return crop;
    });
    this.zoomedInputs += crops.length;
    const results = await this.inner.detect(crops, signal);
    return results.flatMap((faces, k) => {
      const tile = tiles[k]!;
      return faces
        .map((f) => ({
          ...f,
          x: f.x + tile.x,
          y: f.y + tile.y,
          keypoints: f.keypoints.map(([kx, ky]) => [kx + tile.x, ky + tile.y] as [number, number]),
        }))
        .filter((f) => !cutByInnerEdge(f, tile, tiles, img));
    });
  }

  /** The known small faces again, each from a crop a few times its size, four to a model input. */
  private async aroundKnown(img: RgbImage, signal?: AbortSignal): Promise<FaceDetection[]> {
    const { cell, cropFaces } = this.options;
    const scratch = new Float32Array(cell * cell * 3);
    const mosaics: Array<{ image: RgbImage; cells: Array<{ from: Region; at: Region }> }> = [];
    for (const [k, face] of this.small.entries()) {
      if (k % 4 === 0) mosaics.push({ image: { width: 2 * cell, height: 2 * cell, data: new Uint8Array(4 * cell * cell * 3) }, cells: [] });
      const m = mosaics.at(-1)!;
      const side = Math.min(Math.min(img.width, img.height), Math.max(cell / 2, cropFaces * Math.max(face.width, face.height)));
      const from = { x: face.x + face.width / 2 - side / 2, y: face.y + face.height / 2 - side / 2, width: side, height: side };
      const at = { x: (k % 2) * cell, y: ((k % 4) >> 1) * cell, width: cell, height: cell };
      drawRegion(img, from, m.image, at.x, at.y, cell, scratch);
      m.cells.push({ from, at });
    }
    this.zoomedInputs += mosaics.length;
    const results = await this.inner.detect(
      mosaics.map((m) => m.image),
      signal,
    );
    // A face is its cell's only when it lies within that cell: the seams between cells are no face.
    return results.flatMap((faces, k) =>
      mosaics[k]!.cells.flatMap(({ from, at }) => faces.filter((f) => inside(f, at)).map((f) => mapBack(f, at, from))),
    );
  }

  release(): Promise<void> {
    return this.inner.release();
  }
}
