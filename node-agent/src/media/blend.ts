// Watermark compositing with the 16 blend modes of W3C Compositing and Blending Level 1.
//
// Everything happens in RGB (gbrp/gbrap) on the watermark's visible box only: the box is cut out
// of the frame, blended with the watermark into B(Cb, Cs), given the watermark's alpha x opacity,
// and laid back with `overlay`, which is exactly source-over onto an opaque backdrop:
//   Co = as * B(Cb, Cs) + (1 - as) * Cb
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

/** Blend modes whose ffmpeg `blend` formula is the W3C one when top = backdrop, bottom = source. */
const NATIVE: Partial<Record<BlendMode, string>> = {
  multiply: 'multiply',
  screen: 'screen',
  overlay: 'overlay', // ffmpeg tests the top input (backdrop), as W3C overlay = hard-light(Cs, Cb)
  darken: 'darken',
  lighten: 'lighten',
  'hard-light': 'hardlight', // ffmpeg tests the bottom input (source)
  difference: 'difference',
  exclusion: 'exclusion',
};

// ffmpeg's dodge/burn scale by 256 and treat the edge cases the other way round, and its softlight is
// a different curve; these are the W3C definitions over 8-bit values, A = backdrop, B = source.
const SEPARABLE_EXPR: Partial<Record<BlendMode, string>> = {
  'color-dodge': 'if(eq(A,0),0,if(eq(B,255),255,min(255,255*A/(255-B))))',
  'color-burn': 'if(eq(A,255),255,if(eq(B,0),0,255-min(255,255*(255-A)/B)))',
  'soft-light':
    '255*if(lte(B,127.5),A/255-(1-2*B/255)*(A/255)*(1-A/255),' +
    'A/255+(2*B/255-1)*(if(lte(A,63.75),((16*A/255-12)*A/255+4)*A/255,sqrt(A/255))-A/255))',
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
  const inputs = [o.videoLabel, o.imageLabel];
  // Only the part inside the frame is blended; the rest of the frame is never converted per pixel.
  const bx = Math.max(0, x);
  const by = Math.max(0, y);
  const bw = Math.min(o.frameWidth, x + w) - bx;
  const bh = Math.min(o.frameHeight, y + h) - by;
  if (bw <= 0 || bh <= 0 || o.opacity <= 0) {
    // Nothing visible: the caller should not even open the image (see `inputs`).
    return { filter: `[${o.videoLabel}]null[${o.outLabel}]`, inputs: [o.videoLabel], box: null, singleThreaded: false };
  }
  const id = o.outLabel.replace(/[^A-Za-z0-9_]/g, '');
  const L = (name: string) => `[wm_${name}_${id}]`;
  const opacity = Math.min(1, o.opacity);

  const wm =
    `[${o.imageLabel}]scale=${w}:${h},format=rgba` +
    (opacity < 1 ? `,colorchannelmixer=aa=${round4(opacity)}` : '') +
    (bw !== w || bh !== h ? `,crop=${bw}:${bh}:${bx - x}:${by - y}` : '') +
    `,format=gbrap${L('src')}`;
  const layBack = `overlay=x=${bx}:y=${by}:format=gbrp:shortest=1[${o.outLabel}]`;

  if (o.blendMode === 'normal') {
    return { filter: `${wm};[${o.videoLabel}]format=gbrp${L('base')};${L('base')}${L('src')}${layBack}`, inputs, box: { x: bx, y: by, w: bw, h: bh }, singleThreaded: false };
  }

  const cut = `[${o.videoLabel}]format=gbrp,split=2${L('base')}${L('bg')};${L('bg')}crop=${bw}:${bh}:${bx}:${by},format=gbrap${L('under')}`;
  let mix: string;
  let singleThreaded = false;
  if (NON_SEPARABLE.has(o.blendMode)) {
    // geq sees one frame, so backdrop and source sit side by side: backdrop at X, source at X + bw.
    const e = nonSeparableExprs(o.blendMode, bw);
    mix = `${L('under')}${L('src')}hstack=inputs=2:shortest=1,geq=r='${e.r}':g='${e.g}':b='${e.b}':a='${e.a}',crop=${bw}:${bh}:0:0${L('mix')}`;
    singleThreaded = true;
  } else {
    const native = NATIVE[o.blendMode];
    const expr = SEPARABLE_EXPR[o.blendMode];
    const colour = native
      ? [0, 1, 2].map((c) => `c${c}_mode=${native}`).join(':')
      : [0, 1, 2].map((c) => `c${c}_expr='clip(round(${expr}),0,255)'`).join(':');
    if (!native && !expr) throw new Error(`blend mode ${o.blendMode} has no implementation`);
    // The alpha plane must come out as the source's alpha: darken(255, a) = a.
    mix = `${L('under')}${L('src')}blend=${colour}:c3_mode=darken:shortest=1${L('mix')}`;
  }
  return {
    filter: `${wm};${cut};${mix};${L('base')}${L('mix')}${layBack}`,
    inputs,
    box: { x: bx, y: by, w: bw, h: bh },
    singleThreaded,
  };
}

// ---- non-separable modes ------------------------------------------------------------------------
// The spec's Lum/ClipColor/SetLum/Sat/SetSat over 0..255 values (the formulas are scale-free, with
// 1 read as 255). Temporaries: 0-2 the working colour C, 3-5 the source, 6 target luminosity.

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
