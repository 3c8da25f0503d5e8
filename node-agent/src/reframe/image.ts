// Raw frames as the sampler delivers them, and the pixel operations the detector and the mouth
// analysis share. Plain functions over typed arrays: no image library, no copies beyond the output.

/** A packed RGB24 frame, rows top to bottom. */
export interface RgbImage {
  width: number;
  height: number;
  data: Uint8Array;
}

/** A square (or any axis-aligned) region of an image, in that image's pixels. */
export interface Region {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * Resamples `region` of `img` into an NHWC float tensor of `outW`x`outH`x3 (bilinear, values mapped
 * by `scale`/`offset`: v * scale + offset). Parts of the region outside the image read as black,
 * which is what letterboxing means for the model. Column offsets and weights are computed once per
 * call, not per pixel: this runs for every tile of every detected frame.
 */
export function regionToTensor(
  img: RgbImage,
  region: Region,
  outW: number,
  outH: number,
  out: Float32Array,
  scale: number,
  offset: number,
): void {
  const { width: W, height: H, data } = img;
  const sx = region.width / outW;
  const sy = region.height / outH;
  const colA = new Int32Array(outW);
  const colB = new Int32Array(outW);
  const colW = new Float32Array(outW);
  const colIn = new Uint8Array(outW);
  for (let i = 0; i < outW; i++) {
    const fx = region.x + (i + 0.5) * sx - 0.5;
    const x0 = Math.floor(fx);
    colIn[i] = x0 >= -1 && x0 < W ? 1 : 0;
    colA[i] = Math.max(0, x0) * 3;
    colB[i] = Math.min(W - 1, x0 + 1) * 3;
    colW[i] = fx - x0;
  }
  let o = 0;
  for (let j = 0; j < outH; j++) {
    const fy = region.y + (j + 0.5) * sy - 0.5;
    const y0 = Math.floor(fy);
    if (y0 < -1 || y0 >= H) {
      out.fill(offset, o, o + outW * 3);
      o += outW * 3;
      continue;
    }
    const wy = fy - y0;
    const rowA = Math.max(0, y0) * W * 3;
    const rowB = Math.min(H - 1, y0 + 1) * W * 3;
    for (let i = 0; i < outW; i++) {
      if (!colIn[i]) {
        out[o++] = offset;
        out[o++] = offset;
        out[o++] = offset;
        continue;
      }
      const wx = colW[i]!;
      const a = colA[i]!;
      const b = colB[i]!;
      for (let c = 0; c < 3; c++) {
        const top = data[rowA + a + c]! + (data[rowA + b + c]! - data[rowA + a + c]!) * wx;
        const bottom = data[rowB + a + c]! + (data[rowB + b + c]! - data[rowB + a + c]!) * wx;
        out[o++] = (top + (bottom - top) * wy) * scale + offset;
      }
    }
  }
}

/**
 * Samples a grey patch of `outW`x`outH` from `region` (bilinear, luma 0..255). Used for the mouth
 * analysis, where colour adds nothing and the patch is tiny.
 */
export function greyPatch(img: RgbImage, region: Region, outW: number, outH: number): Float32Array {
  const { width: W, height: H, data } = img;
  const out = new Float32Array(outW * outH);
  const sx = region.width / outW;
  const sy = region.height / outH;
  let o = 0;
  for (let j = 0; j < outH; j++) {
    const fy = Math.min(H - 1, Math.max(0, region.y + (j + 0.5) * sy - 0.5));
    const y0 = Math.min(H - 2, Math.floor(fy));
    const wy = fy - y0;
    for (let i = 0; i < outW; i++) {
      const fx = Math.min(W - 1, Math.max(0, region.x + (i + 0.5) * sx - 0.5));
      const x0 = Math.min(W - 2, Math.floor(fx));
      const wx = fx - x0;
      const p = (y0 * W + x0) * 3;
      const q = p + W * 3;
      const luma = (k: number) => 0.299 * data[k]! + 0.587 * data[k + 1]! + 0.114 * data[k + 2]!;
      const top = luma(p) * (1 - wx) + luma(p + 3) * wx;
      const bottom = luma(q) * (1 - wx) + luma(q + 3) * wx;
      out[o++] = top * (1 - wy) + bottom * wy;
    }
  }
  return out;
}
