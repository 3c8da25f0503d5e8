// Watermark compositing with the 16 blend modes of W3C Compositing and Blending Level 1.
//
// Everything happens on the watermark's box only: the patch under the watermark is cut out of the
// frame and blended with the watermark into B(Cb, Cs), carrying the watermark's alpha x opacity;
// one `overlay` then composites that onto the frame (source-over onto an opaque backdrop,
// Co = as * B(Cb, Cs) + (1 - as) * Cb, affine, so exact in the frame's own format). Converting
// whole 1080x1920 frames would cost more than the blend itself. The separable modes blend in RGB
// with one lookup table per channel; the non-separable ones in YUV (4:2:0 for video frames) with a
// few tables per plane (non-separable.ts), or with geq on the bundled 2018 ffmpeg
// (non-separable-geq.ts). `normal` needs no blend: overlay alone does it.
import { placeWatermark, type WatermarkPlacement } from '@shorts/common/render/watermark-geometry';
import type { BlendMode } from '@shorts/common/render/options';
import { isNonSeparable, nonSeparableBlend } from './non-separable.js';
import { geqBlend } from './non-separable-geq.js';

// The geometry is shared with the studio's preview.
export { placeWatermark, type WatermarkPlacement };

export interface WatermarkFilterOptions extends WatermarkPlacement {
  videoLabel: string; // filter-graph label of the frame, without brackets
  imageLabel: string; // label of the (looped) watermark image, e.g. "1:v"
  outLabel: string;
  frameWidth: number;
  frameHeight: number;
  imageWidth: number;
  imageHeight: number;
  opacity: number; // 0..1, multiplies the image's own alpha
  blendMode: BlendMode;
  /** Pixel format of the frame at [videoLabel]; the output keeps it. Default yuv420p. */
  frameFormat?: 'yuv420p' | 'gbrp';
  /** The bundled 2018 ffmpeg runs: non-separable modes fall back to geq (non-separable-geq.ts). */
  legacyFfmpeg?: boolean;
}

export interface WatermarkFilter {
  filter: string; // filter_complex fragment reading [videoLabel] and [imageLabel], writing [outLabel]
  inputs: string[]; // labels the fragment consumes (the image only when the watermark is visible)
  box: { x: number; y: number; w: number; h: number } | null; // visible part of the watermark; null = off screen
}

// Separable modes as 256x256 tables (lut2), built from the W3C definitions with x = backdrop and
// y = source, both 0..255. ffmpeg's own `blend` modes are not used: multiply, screen, overlay,
// hard-light and exclusion truncate (up to 2 levels off), dodge/burn scale by 256 and treat the
// edge cases the other way round, and its softlight is a different curve.
const SEPARABLE_EXPR: Partial<Record<BlendMode, string>> = {
  multiply: 'x*y/255',
  screen: 'x+y-x*y/255',
  overlay: 'if(lte(x,127.5),2*x*y/255,255-2*(255-x)*(255-y)/255)', // hard-light with the roles swapped
  darken: 'min(x,y)',
  lighten: 'max(x,y)',
  'color-dodge': 'if(eq(x,0),0,if(eq(y,255),255,min(255,255*x/(255-y))))',
  'color-burn': 'if(eq(x,255),255,if(eq(y,0),0,255-min(255,255*(255-x)/y)))',
  'hard-light': 'if(lte(y,127.5),2*x*y/255,255-2*(255-x)*(255-y)/255)',
  'soft-light':
    '255*if(lte(y,127.5),x/255-(1-2*y/255)*(x/255)*(1-x/255),' +
    'x/255+(2*y/255-1)*(if(lte(x,63.75),((16*x/255-12)*x/255+4)*x/255,sqrt(x/255))-x/255))',
  difference: 'abs(x-y)',
  exclusion: 'x+y-2*x*y/255',
};

export function buildWatermarkFilter(o: WatermarkFilterOptions): WatermarkFilter {
  const { x, y, w, h } = placeWatermark(o, o.frameWidth, o.frameHeight, o.imageWidth, o.imageHeight);
  const bx = Math.max(0, x);
  const by = Math.max(0, y);
  const bw = Math.min(o.frameWidth, x + w) - bx;
  const bh = Math.min(o.frameHeight, y + h) - by;
  if (bw <= 0 || bh <= 0 || o.opacity <= 0) {
    // Nothing visible: the caller should not even open the image (see `inputs`).
    return { filter: `[${o.videoLabel}]null[${o.outLabel}]`, inputs: [o.videoLabel], box: null };
  }
  // Only a patch around the visible box goes through RGB; for 4:2:0 frames it is widened to even
  // edges so the blended patch lands back on whole chroma samples.
  const yuv = (o.frameFormat ?? 'yuv420p') === 'yuv420p';
  const even = (v: number, up: boolean) => (yuv ? (up ? Math.ceil(v / 2) * 2 : Math.floor(v / 2) * 2) : v);
  const px = even(bx, false);
  const py = even(by, false);
  const pw = Math.min(o.frameWidth, even(bx + bw, true)) - px;
  const ph = Math.min(o.frameHeight, even(by + bh, true)) - py;

  const id = o.outLabel.replace(/[^A-Za-z0-9_]/g, '');
  const L = (name: string) => `[wm_${name}_${id}]`;
  const opacity = Math.min(1, o.opacity);
  // The watermark at patch size with its opacity, in RGBA; each path converts it once from there.
  // setsar=1: scaling 431x120 to 300x84 is not exactly proportional, and scale then records the
  // difference as a sample aspect ratio (3017:3000); filters that join planes (mergeplanes) refuse
  // inputs whose SAR differs. The watermark is drawn pixel for pixel: its pixels are square.
  const watermark =
    `[${o.imageLabel}]scale=${w}:${h},setsar=1,format=rgba` +
    (opacity < 1 ? `,colorchannelmixer=aa=${round4(opacity)}` : '') +
    (bw !== w || bh !== h ? `,crop=${bw}:${bh}:${bx - x}:${by - y}` : '') +
    (pw !== bw || ph !== bh ? `,pad=${pw}:${ph}:${bx - px}:${by - py}:color=black@0` : '');
  const src = `${watermark},format=gbrap${L('src')}`;
  if (o.blendMode === 'normal') {
    // Source-over is affine in the colour values, so it gives the same result in the frame's own
    // YUV as in RGB (up to rounding, and the watermark's chroma at 4:2:0 on its edges). overlay then
    // blends in place on the box: no split, cut, conversion and paste-back of the frame.
    const over = `overlay=x=${px}:y=${py}:format=${yuv ? 'yuv420' : 'gbrp'}`;
    return {
      filter: `${src};[${o.videoLabel}]${L('src')}${over}[${o.outLabel}]`,
      inputs: [o.videoLabel, o.imageLabel],
      box: { x: bx, y: by, w: bw, h: bh },
    };
  }

  // The blended box B(Cb, Cs), carrying the watermark's alpha, goes onto the frame with one overlay:
  // source-over is affine, so doing it in the frame's own format is exact as for `normal`, and the
  // overlay writes the box in place. eof_action=pass: the box has a frame for every video frame,
  // and without it overlay's frame sync (made to repeat a secondary's last frame) copies every
  // whole frame before writing into it, 6 MB of memory traffic a 1080x1920 frame.
  const cut = `[${o.videoLabel}]split=2${L('frame')}${L('bg')};${L('bg')}crop=${pw}:${ph}:${px}:${py},setsar=1`;
  const paste = (mix: string) =>
    `${L('frame')}${mix}overlay=x=${px}:y=${py}:format=${yuv ? 'yuv420' : 'gbrp'}:eof_action=pass[${o.outLabel}]`;
  const result = (parts: string[]): WatermarkFilter => ({
    filter: parts.join(';'),
    inputs: [o.videoLabel, o.imageLabel],
    box: { x: bx, y: by, w: bw, h: bh },
  });

  if (isNonSeparable(o.blendMode) && !o.legacyFfmpeg) {
    // In YUV (non-separable.ts says why): video frames in their own 4:2:0 and limited range, RGB
    // frames in full-range BT.601 4:4:4. The still watermark stays one frame: the program's steps on
    // its planes alone run once.
    const fmt = yuv ? 'yuva420p' : 'yuva444p';
    const toYuv = `scale=out_color_matrix=bt601:out_range=${yuv ? 'tv' : 'pc'},format=`;
    const layout = yuv ? { range: 'limited' as const, halfChroma: { width: pw / 2, height: ph / 2 } } : { range: 'full' as const };
    return result([
      `${watermark},${toYuv}${fmt}${L('src')}`,
      `${cut}${yuv ? '' : `,${toYuv}yuv444p`}${L('b')}`,
      ...nonSeparableBlend(o.blendMode, layout, `wm_b_${id}`, `wm_src_${id}`, `wm_mix_${id}`, id),
      // overlay would read the merged planes as limited range: say what they are.
      ...(yuv ? [] : [`${L('mix')}scale=in_color_matrix=bt601:in_range=pc,format=gbrap${L('mixrgb')}`]),
      paste(yuv ? L('mix') : L('mixrgb')),
    ]);
  }

  const mix = isNonSeparable(o.blendMode)
    ? geqBlend(o.blendMode, pw, { backdrop: `wm_backdrop_${id}`, source: `wm_src_${id}`, out: `wm_mix_${id}`, tmp: L })
    : [`${L('backdrop')}${L('src')}${separableLut2(o.blendMode)}${L('mix')}`];
  return result([src, `${cut},format=gbrap${L('backdrop')}`, ...mix, paste(L('mix'))]);
}

/** A separable mode as lut2 over [backdrop][watermark], both gbrap: one table per colour channel,
 * c3=y keeps the watermark's alpha. */
function separableLut2(mode: BlendMode): string {
  const expr = SEPARABLE_EXPR[mode];
  if (!expr) throw new Error(`blend mode ${mode} has no implementation`);
  const c = `'clip(round(${expr}),0,255)'`;
  return `lut2=c0=${c}:c1=${c}:c2=${c}:c3=y`;
}

const round4 = (n: number) => Math.round(n * 10000) / 10000;
