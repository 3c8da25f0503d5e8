// The four non-separable blend modes as per-pixel geq expressions, in RGB. Only for the 2018 static
// ffmpeg build bundled by @ffmpeg-installer: its filter graph never reaches end of stream with the
// lookup-table program of non-separable.ts in some modes (color, hue), so an agent without a current
// ffmpeg renders these modes this way, 4-8 times slower, with the same results.
import type { NonSeparableMode } from './non-separable.js';

/**
 * [backdrop] and [source] (both gbrap, w wide) into [out] (gbrap, the source's alpha), as
 * filter-graph fragments.
 */
export function geqBlend(
  mode: NonSeparableMode,
  w: number,
  labels: { backdrop: string; source: string; out: string; tmp: (name: string) => string },
): string[] {
  const { backdrop, source, out, tmp } = labels;
  const e = nonSeparableExprs(mode, w);
  return [
    `[${backdrop}]split=2${tmp('cb')}${tmp('cb2')}`,
    `[${source}]split=2${tmp('cs')}${tmp('cs2')}`,
    `${tmp('cb2')}${backdropScalars()}${tmp('bscal')}`,
    `${tmp('cs2')}${sourceScalars(mode)}${tmp('sscal')}`,
    `${tmp('cb')}${tmp('bscal')}${tmp('cs')}${tmp('sscal')}hstack=inputs=4,` +
      `geq=r='${e.r}':g='${e.g}':b='${e.b}':a='${e.a}',crop=${w}:ih:0:0[${out}]`,
  ];
}

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
// their own: backdrop ones (Lum, min, max) per frame, source ones once (the watermark is one frame).
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
function sourceScalars(mode: NonSeparableMode): string {
  const c = rgb();
  const mn = min3(...c);
  const mx = max3(...c);
  switch (mode) {
    case 'luminosity':
    case 'color': // r = Lum(Cs), g = min, b = max
      return `geq=r='${byte(lum(...c))}':g='${mn}':b='${mx}':a='255'`;
    case 'saturation': // r = Sat(Cs)
      return `geq=r='${mx}-${mn}':g='0':b='0':a='255'`;
    case 'hue': {
      // u = SetSat(Cs, 255) in r/g/b, Lum(u) in alpha
      const u = (ch: string) => `if(gt(${mx},${mn}),255*(${ch}-${mn})/(${mx}-${mn}),0)`;
      return `geq=r='${byte(u(c[0]))}':g='${byte(u(c[1]))}':b='${byte(u(c[2]))}':a='${byte(lum(u(c[0]), u(c[1]), u(c[2])))}'`;
    }
    default:
      throw new Error(`${mode} is separable`);
  }
}

/** The final per-channel expressions over [backdrop | its scalars | source | its scalars], each w wide. */
function nonSeparableExprs(mode: NonSeparableMode, w: number): { r: string; g: string; b: string; a: string } {
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
      case 'hue': {
        // C = Sat(Cb) * u / 255
        const sat = `(${bMax}-${bMin})`;
        return setLum(bLum, `${sat}*${[s0, s1, s2][i]}/255`, `${sat}*${sAux}/255`, '0', sat);
      }
      case 'saturation': {
        // C = Sat(Cs) * (Cb - min) / (max - min); a grey backdrop stays grey
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
