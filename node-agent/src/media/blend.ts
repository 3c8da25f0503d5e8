// Watermark compositing with the 16 blend modes of W3C Compositing and Blending Level 1.
//
// Everything happens in RGB (gbrp/gbrap) on the watermark's box only: the patch under the watermark
// is cut out of the frame, blended with the watermark into B(Cb, Cs) carrying the watermark's
// alpha x opacity, composited onto the patch with `overlay` (exactly source-over onto an opaque
// backdrop: Co = as * B(Cb, Cs) + (1 - as) * Cb) and put back. Converting whole 1080x1920 frames to
// RGB and back would cost more than the blend itself. `normal` skips all that: source-over is
// affine, so overlay does it in the frame's own format, in place.
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
  const src =
    `[${o.imageLabel}]scale=${w}:${h},format=rgba` +
    (opacity < 1 ? `,colorchannelmixer=aa=${round4(opacity)}` : '') +
    (bw !== w || bh !== h ? `,crop=${bw}:${bh}:${bx - x}:${by - y}` : '') +
    (pw !== bw || ph !== bh ? `,pad=${pw}:${ph}:${bx - px}:${by - py}:color=black@0` : '') +
    `,format=gbrap${L('src')}`;
  if (o.blendMode === 'normal') {
    // Source-over is affine in the colour values, so it gives the same result in the frame's own
    // YUV as in RGB (up to rounding, and the watermark's chroma at 4:2:0 on its edges). overlay then
    // blends in place on the box: no split, cut, conversion and paste-back of the frame.
    const over = `overlay=x=${px}:y=${py}:format=${yuv ? 'yuv420' : 'gbrp'}:shortest=1`;
    return { filter: `${src};[${o.videoLabel}]${L('src')}${over}[${o.outLabel}]`, inputs: [o.videoLabel, o.imageLabel], box: { x: bx, y: by, w: bw, h: bh } };
  }

  const cut = `[${o.videoLabel}]split=2${L('frame')}${L('bg')};${L('bg')}crop=${pw}:${ph}:${px}:${py},format=gbrp`;
  // Source-over onto the opaque backdrop patch, then the patch goes back in the frame's own format.
  const composite = `overlay=format=gbrp:shortest=1${yuv ? ',format=yuv420p' : ''}${L('patch')};` +
    `${L('frame')}${L('patch')}overlay=x=${px}:y=${py}${yuv ? '' : ':format=gbrp'}:shortest=1[${o.outLabel}]`;
  const parts = [src];
  parts.push(`${cut},split=2${L('under')}${L('under2')}`, `${L('under2')}format=gbrap${L('backdrop')}`);
  let mix: string;
  if (NON_SEPARABLE.has(o.blendMode)) {
    const e = nonSeparableExprs(o.blendMode, pw);
    parts[0] = src.replace(L('src'), `,split=2${L('src')}${L('src2')}`);
    parts.push(
      `${L('backdrop')}split=2${L('cb')}${L('cb2')}`,
      `${L('cb2')}${backdropScalars()}${L('bscal')}`,
      `${L('src2')}${sourceScalars(o.blendMode)}${L('sscal')}`,
    );
    mix = `${L('cb')}${L('bscal')}${L('src')}${L('sscal')}hstack=inputs=4:shortest=1,` +
      `geq=r='${e.r}':g='${e.g}':b='${e.b}':a='${e.a}',crop=${pw}:${ph}:0:0${L('mix')}`;
  } else {
    const expr = SEPARABLE_EXPR[o.blendMode];
    if (!expr) throw new Error(`blend mode ${o.blendMode} has no implementation`);
    const c = `'clip(round(${expr}),0,255)'`;
    // c3: the blended patch carries the source's alpha.
    mix = `${L('backdrop')}${L('src')}lut2=c0=${c}:c1=${c}:c2=${c}:c3=y:shortest=1${L('mix')}`;
  }
  parts.push(mix, `${L('under')}${L('mix')}${composite}`);
  return { filter: parts.join(';'), inputs: [o.videoLabel, o.imageLabel], box: { x: bx, y: by, w: bw, h: bh } };
}

// ---- non-separable modes ------------------------------------------------------------------------
// The spec's SetLum(C, l) = ClipColor(C + l - Lum(C)) folds into one scale K shared by the three
// channels (0..255 values, "1" read as 255):
//   B_i = l + (C_i - Lum(C)) * K,  K = min(1, l / (Lum(C) - min C)) * min(1, (255 - l) / (max C - Lum(C)))
// (the two min() are ClipColor's n < 0 and x > 1 corrections; both use n and x from before either
// correction, as the spec does). For each mode C and l come from per-pixel scalars:
//   luminosity  C = Cb,                l = Lum(Cs)
//   color       C = Cs,                l = Lum(Cb)
//   hue         C = Sat(Cb) * u(Cs),   l = Lum(Cb)   u = SetSat(Cs, 1): min 0, max 1 unless grey
//   saturation  C = Sat(Cs) * u(Cb),   l = Lum(Cb)
// geq interprets expressions per pixel, so the scalars are computed once per pixel into planes of
// their own: backdrop ones (Lum, min, max) per frame, source ones once per watermark frame (1 fps).
// The final geq reads [backdrop | backdrop scalars | source | source scalars] side by side.
// No st()/ld() temporaries: they are shared between geq's slice threads in older ffmpeg.
// Cost: the expression interpreter runs for every opaque watermark pixel of every frame, roughly
// 3 (luminosity, color) to 7 (saturation) microseconds per pixel on one core of the 2018 static
// build: a 150x150 logo adds 60-150 ms per frame. The separable modes are lookup tables (~0).
// Transparent watermark pixels are skipped.

const lum = (r: string, g: string, b: string) => `(0.3*${r}+0.59*${g}+0.11*${b})`;
const min3 = (a: string, b: string, c: string) => `min(min(${a},${b}),${c})`;
const max3 = (a: string, b: string, c: string) => `max(max(${a},${b}),${c})`;
const rgb = (dx = '') => [`r(X${dx},Y)`, `g(X${dx},Y)`, `b(X${dx},Y)`] as const;
/** geq plane expressions must be integers 0..255 (the result is truncated into a byte). */
const byte = (e: string) => `clip(round(${e}),0,255)`;

/** Per-pixel backdrop scalars: r = Lum, g = min, b = max. */
function backdropScalars(): string {
  const c = rgb();
  return `geq=r='${byte(lum(...c))}':g='${min3(...c)}':b='${max3(...c)}':a='255'`;
}

/** Per-pixel source scalars, once per watermark frame; the layout depends on the mode. */
function sourceScalars(mode: BlendMode): string {
  const c = rgb();
  const mn = min3(...c);
  const mx = max3(...c);
  switch (mode) {
    case 'luminosity':
    case 'color': // r = Lum(Cs), g = min, b = max
      return `geq=r='${byte(lum(...c))}':g='${mn}':b='${mx}':a='255'`;
    case 'saturation': // r = Sat(Cs)
      return `geq=r='${mx}-${mn}':g='0':b='0':a='255'`;
    case 'hue': { // u = SetSat(Cs, 255) in r/g/b, Lum(u) in alpha
      const u = (ch: string) => `if(gt(${mx},${mn}),255*(${ch}-${mn})/(${mx}-${mn}),0)`;
      return `geq=r='${byte(u(c[0]))}':g='${byte(u(c[1]))}':b='${byte(u(c[2]))}':a='${byte(lum(u(c[0]), u(c[1]), u(c[2])))}'`;
    }
    default:
      throw new Error(`${mode} is separable`);
  }
}

/** The final per-channel expressions over [backdrop | its scalars | source | its scalars], each w wide. */
function nonSeparableExprs(mode: BlendMode, w: number): { r: string; g: string; b: string; a: string } {
  const cb = rgb();
  const [bLum, bMin, bMax] = rgb(`+${w}`);
  const cs = rgb(`+${2 * w}`);
  const sA = `alpha(X+${2 * w},Y)`;
  const [s0, s1, s2] = rgb(`+${3 * w}`);
  const sAux = `alpha(X+${3 * w},Y)`;
  const eps = (e: string) => `max(${e},0.000001)`; // a zero span means C is grey, and then K is unused
  const setLum = (l: string, ci: string, lumC: string, minC: string, maxC: string) =>
    `${l}+(${ci}-${lumC})*min(1,${l}/${eps(`${lumC}-${minC}`)})*min(1,(255-${l})/${eps(`${maxC}-${lumC}`)})`;
  const channel = (i: 0 | 1 | 2): string => {
    switch (mode) {
      case 'luminosity':
        return setLum(s0, cb[i], bLum, bMin, bMax);
      case 'color':
        return setLum(bLum, cs[i], s0, s1, s2);
      case 'hue': { // C = Sat(Cb) * u / 255
        const sat = `(${bMax}-${bMin})`;
        return setLum(bLum, `${sat}*${[s0, s1, s2][i]}/255`, `${sat}*${sAux}/255`, '0', sat);
      }
      case 'saturation': { // C = Sat(Cs) * (Cb - min) / (max - min); a grey backdrop stays grey
        const span = `(${bMax}-${bMin})`;
        const ci = `${s0}*(${cb[i]}-${bMin})/${span}`;
        const lumC = `${s0}*(${bLum}-${bMin})/${span}`;
        return `if(gt(${bMax},${bMin}),${setLum(bLum, ci, lumC, '0', s0)},${bLum})`;
      }
      default:
        throw new Error(`${mode} is separable`);
    }
  };
  // Only the first w columns are the result; transparent source pixels are not worth computing.
  const skip = `gte(X,${w})+eq(${sA},0)`;
  const out = (i: 0 | 1 | 2) => `if(${skip},0,${byte(channel(i))})`;
  return { r: out(0), g: out(1), b: out(2), a: `if(gte(X,${w}),0,${sA})` };
}

const round4 = (n: number) => Math.round(n * 10000) / 10000;
