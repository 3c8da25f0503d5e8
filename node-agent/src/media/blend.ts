// Watermark compositing with the 16 blend modes of W3C Compositing and Blending Level 1.
//
// Everything happens in RGB (gbrp/gbrap) on the watermark's box only: the patch under the watermark
// is cut out of the frame, blended with the watermark into B(Cb, Cs) carrying the watermark's
// alpha x opacity, composited onto the patch with `overlay` (exactly source-over onto an opaque
// backdrop: Co = as * B(Cb, Cs) + (1 - as) * Cb) and put back. Converting whole 1080x1920 frames to
// RGB and back would cost more than the blend itself.
import { parseLength, resolveLength } from '../../../common/src/render/position.js';
import type { BlendMode } from '../../../common/src/render/options.js';

export interface WatermarkPlacement {
  left?: string; // CSS lengths: Npx, N%, calc(); % of the frame width
  top?: string; // % of the frame height; wins over bottom
  bottom?: string;
  width?: string; // defaults to the image's own width
}

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
}

export interface WatermarkFilter {
  filter: string; // filter_complex fragment reading [videoLabel] and [imageLabel], writing [outLabel]
  inputs: string[]; // labels the fragment consumes (the image only when the watermark is visible)
  box: { x: number; y: number; w: number; h: number } | null; // visible part of the watermark; null = off screen
  /**
   * The fragment keeps per-pixel temporaries with st()/ld(), which slice-threaded geq shares between
   * threads in older ffmpeg builds: run the graph with `-filter_complex_threads 1`.
   */
  singleThreaded: boolean;
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

const NON_SEPARABLE = new Set<BlendMode>(['hue', 'saturation', 'color', 'luminosity']);

/** Where the watermark lands in a frame, in whole pixels (may extend past the edges). */
export function placeWatermark(p: WatermarkPlacement, frameWidth: number, frameHeight: number, imageWidth: number, imageHeight: number) {
  const w = Math.max(1, Math.round(p.width !== undefined ? resolveLength(parseLength('waterMark.width', p.width), frameWidth) : imageWidth));
  const h = Math.max(1, Math.round((w * imageHeight) / imageWidth));
  const x = Math.round(p.left !== undefined ? resolveLength(parseLength('waterMark.left', p.left), frameWidth) : 0);
  let y = 0;
  if (p.top !== undefined) y = Math.round(resolveLength(parseLength('waterMark.top', p.top), frameHeight));
  else if (p.bottom !== undefined) y = frameHeight - h - Math.round(resolveLength(parseLength('waterMark.bottom', p.bottom), frameHeight));
  return { x, y, w, h };
}

export function buildWatermarkFilter(o: WatermarkFilterOptions): WatermarkFilter {
  const { x, y, w, h } = placeWatermark(o, o.frameWidth, o.frameHeight, o.imageWidth, o.imageHeight);
  const bx = Math.max(0, x);
  const by = Math.max(0, y);
  const bw = Math.min(o.frameWidth, x + w) - bx;
  const bh = Math.min(o.frameHeight, y + h) - by;
  if (bw <= 0 || bh <= 0 || o.opacity <= 0) {
    // Nothing visible: the caller should not even open the image (see `inputs`).
    return { filter: `[${o.videoLabel}]null[${o.outLabel}]`, inputs: [o.videoLabel], box: null, singleThreaded: false };
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
  const src =
    `[${o.imageLabel}]scale=${w}:${h},format=rgba` +
    (opacity < 1 ? `,colorchannelmixer=aa=${round4(opacity)}` : '') +
    (bw !== w || bh !== h ? `,crop=${bw}:${bh}:${bx - x}:${by - y}` : '') +
    (pw !== bw || ph !== bh ? `,pad=${pw}:${ph}:${bx - px}:${by - py}:color=black@0` : '') +
    `,format=gbrap${L('src')}`;
  const cut = `[${o.videoLabel}]split=2${L('frame')}${L('bg')};${L('bg')}crop=${pw}:${ph}:${px}:${py},format=gbrp`;
  // Source-over onto the opaque backdrop patch, then the patch goes back in the frame's own format.
  const composite = `overlay=format=gbrp:shortest=1${yuv ? ',format=yuv420p' : ''}${L('patch')};` +
    `${L('frame')}${L('patch')}overlay=x=${px}:y=${py}${yuv ? '' : ':format=gbrp'}:shortest=1[${o.outLabel}]`;
  const parts = [src];
  let singleThreaded = false;

  if (o.blendMode === 'normal') {
    parts.push(`${cut}${L('under')}`, `${L('under')}${L('src')}${composite}`);
  } else {
    parts.push(`${cut},split=2${L('under')}${L('under2')}`, `${L('under2')}format=gbrap${L('backdrop')}`);
    let mix: string;
    if (NON_SEPARABLE.has(o.blendMode)) {
      // geq sees one frame, so backdrop and source sit side by side: backdrop at X, source at X + pw.
      const e = nonSeparableExprs(o.blendMode, pw);
      mix = `${L('backdrop')}${L('src')}hstack=inputs=2:shortest=1,geq=r='${e.r}':g='${e.g}':b='${e.b}':a='${e.a}',crop=${pw}:${ph}:0:0${L('mix')}`;
      singleThreaded = true;
    } else {
      const expr = SEPARABLE_EXPR[o.blendMode];
      if (!expr) throw new Error(`blend mode ${o.blendMode} has no implementation`);
      const c = `'clip(round(${expr}),0,255)'`;
      // c3: the blended patch carries the source's alpha.
      mix = `${L('backdrop')}${L('src')}lut2=c0=${c}:c1=${c}:c2=${c}:c3=y:shortest=1${L('mix')}`;
    }
    parts.push(mix, `${L('under')}${L('mix')}${composite}`);
  }
  return { filter: parts.join(';'), inputs: [o.videoLabel, o.imageLabel], box: { x: bx, y: by, w: bw, h: bh }, singleThreaded };
}

// ---- non-separable modes ------------------------------------------------------------------------
// The spec's Lum/ClipColor/SetLum/Sat/SetSat over 0..255 values (the formulas are scale-free, with
// 1 read as 255). Temporaries: 0-2 the working colour C, 3-5 the source, 6 target luminosity.
// geq interprets these per pixel and per channel: about 5 (luminosity) to 9 (hue) microseconds per
// watermark pixel per frame on one core, so a 150x150 logo adds 0.1-0.2 s per frame. Transparent
// watermark pixels are skipped.

const lum = (r: string, g: string, b: string) => `(0.3*${r}+0.59*${g}+0.11*${b})`;
const min3 = (a: string, b: string, c: string) => `min(min(${a},${b}),${c})`;
const max3 = (a: string, b: string, c: string) => `max(max(${a},${b}),${c})`;
const ld = (i: number) => `ld(${i})`;

/** SetSat(C in vars 0-2 or 3-5, s) written into vars 0-2; 8/9 hold min/max of C. */
function setSat(from: 0 | 3, s: string): string {
  const c = [ld(from), ld(from + 1), ld(from + 2)] as const;
  return `st(7,${s});st(8,${min3(...c)});st(9,${max3(...c)});` +
    [0, 1, 2].map((i) => `st(${i},if(gt(ld(9),ld(8)),(${c[i]}-ld(8))*ld(7)/(ld(9)-ld(8)),0))`).join(';');
}

function nonSeparableExprs(mode: BlendMode, sourceOffset: number): { r: string; g: string; b: string; a: string } {
  const load =
    `st(0,r(X,Y));st(1,g(X,Y));st(2,b(X,Y));` +
    `st(3,r(X+${sourceOffset},Y));st(4,g(X+${sourceOffset},Y));st(5,b(X+${sourceOffset},Y))`;
  const lumB = lum(ld(0), ld(1), ld(2));
  const lumS = lum(ld(3), ld(4), ld(5));
  let base: string; // leaves C in 0-2 and the target luminosity in 6
  switch (mode) {
    case 'hue': // SetLum(SetSat(Cs, Sat(Cb)), Lum(Cb))
      base = `st(6,${lumB});${setSat(3, `${max3(ld(0), ld(1), ld(2))}-${min3(ld(0), ld(1), ld(2))}`)}`;
      break;
    case 'saturation': // SetLum(SetSat(Cb, Sat(Cs)), Lum(Cb))
      base = `st(6,${lumB});${setSat(0, `${max3(ld(3), ld(4), ld(5))}-${min3(ld(3), ld(4), ld(5))}`)}`;
      break;
    case 'color': // SetLum(Cs, Lum(Cb))
      base = `st(6,${lumB});st(0,ld(3));st(1,ld(4));st(2,ld(5))`;
      break;
    case 'luminosity': // SetLum(Cb, Lum(Cs))
      base = `st(6,${lumS})`;
      break;
    default:
      throw new Error(`${mode} is separable`);
  }
  // SetLum: shift C by d = l - Lum(C), then ClipColor with n/x taken before either correction.
  const setLum = `st(7,ld(6)-${lum(ld(0), ld(1), ld(2))});st(0,ld(0)+ld(7));st(1,ld(1)+ld(7));st(2,ld(2)+ld(7));` +
    `st(8,${min3(ld(0), ld(1), ld(2))});st(9,${max3(ld(0), ld(1), ld(2))})`;
  const clip = (i: number) =>
    `st(${i},if(lt(ld(8),0),ld(6)+(ld(${i})-ld(6))*ld(6)/(ld(6)-ld(8)),ld(${i})));` +
    `if(gt(ld(9),255),ld(6)+(ld(${i})-ld(6))*(255-ld(6))/(ld(9)-ld(6)),ld(${i}))`;
  // The right half (the source copy) and fully transparent source pixels are not worth computing.
  const skip = `if(gte(X,${sourceOffset})+eq(alpha(X+${sourceOffset},Y),0),0,`;
  const channel = (i: number) => `${skip}clip(round((${load};${base};${setLum};${clip(i)})),0,255))`;
  return { r: channel(0), g: channel(1), b: channel(2), a: `if(gte(X,${sourceOffset}),0,alpha(X+${sourceOffset},Y))` };
}

const round4 = (n: number) => Math.round(n * 10000) / 10000;
