// The four non-separable W3C blend modes (hue, saturation, color, luminosity) as lookup tables over
// YUV 4:4:4 planes instead of a per-pixel expression interpreter.
//
// Why this works: W3C Lum() weighs R, G, B as BT.601 luma does, so with C = (R, G, B) written as
// luma Y plus a chroma part d = C - Y (linear in U, V), SetLum(C, l) = l + d * K only scales the
// chroma. All four modes then take one shape:
//
//   Y_out = l                      d_out = dir * min(S, Q(l, a))
//   Q(l, a) = min(1, l / a, (1 - l) / (1 - a))
//
// where dir is the chroma of a colour stretched to saturation 1 (SetSat(C, 1)), a = Lum of that
// stretched colour, S a saturation, and the min() is ClipColor's two corrections (with Sat(C) <= 1
// at most one of them applies, so the product the spec computes is this min):
//
//   mode        l          dir, a from   S
//   luminosity  Lum(Cs)    backdrop      Sat(Cb)
//   color       Lum(Cb)    source        Sat(Cs)
//   hue         Lum(Cb)    source        Sat(Cb)
//   saturation  Lum(Cb)    backdrop      Sat(Cs)
//
// dir, a and S each depend on one pixel's (U, V) only, and the rest on two planes, so every step is
// an 8-bit lut2: a 256x256 table built once, then one lookup per pixel, on the watermark's box
// only. The longest program (luminosity) is 8 tables after one pass-through of the watermark; the
// expression interpreter (geq, still used with the 2018 ffmpeg build) cost 8-9 times a bare encode.
import type { BlendMode } from '@shorts/common/render/options';

export type NonSeparableMode = Extract<BlendMode, 'hue' | 'saturation' | 'color' | 'luminosity'>;
export const NON_SEPARABLE_MODES: readonly NonSeparableMode[] = ['hue', 'saturation', 'color', 'luminosity'];
export const isNonSeparable = (m: BlendMode): m is NonSeparableMode => (NON_SEPARABLE_MODES as readonly BlendMode[]).includes(m);

/** Code values of 8-bit YUV: full range (from RGB frames) or limited (video frames). */
export type YuvRange = 'full' | 'limited';

interface RangeCodes {
  y0: number; // code of luma 0
  ys: number; // luma codes per unit
  cs: number; // chroma codes per unit (the chroma axis runs -0.5..0.5 around 128)
}
const RANGES: Record<YuvRange, RangeCodes> = {
  full: { y0: 0, ys: 255, cs: 255 },
  limited: { y0: 16, ys: 219, cs: 224 },
};

// Expressions for lut2. The chroma of one colour from its (U, V) code values, in units where luma
// runs 0..1 (BT.601: R = Y + 1.402 v, G = Y - 0.344136 u - 0.714136 v, B = Y + 1.772 u).
// Each expression is evaluated 65,536 times when its table is built: the chroma parts are stored
// once in expression variables (st/ld) rather than spelled out in every max() and min().
function chromaParts(r: RangeCodes, u: string, v: string) {
  const prelude =
    `st(0,(${u}-128)/${r.cs});st(1,(${v}-128)/${r.cs});` +
    'st(2,1.402*ld(1));st(3,-0.344136*ld(0)-0.714136*ld(1));st(4,1.772*ld(0));' +
    'st(5,min(min(ld(2),ld(3)),ld(4)));st(6,max(max(ld(2),ld(3)),ld(4))-ld(5));';
  return { prelude, cu: 'ld(0)', cv: 'ld(1)', mn: 'ld(5)', sat: 'ld(6)' };
}

const EPS = 0.000001;
const clipRound = (e: string, lo: number, hi: number) => `clip(round(${e}),${lo},${hi})`;

/** 255 * Sat of the colour with chroma (u, v). */
const satExpr = (r: RangeCodes) => (u: string, v: string) => {
  const p = chromaParts(r, u, v);
  return `${p.prelude}${clipRound(`255*${p.sat}`, 0, 255)}`;
};
/** 255 * Lum of the colour stretched to saturation 1 (its min is then 0), i.e. -min(d) / Sat. */
const stretchedLumExpr = (r: RangeCodes) => (u: string, v: string) => {
  const p = chromaParts(r, u, v);
  return `${p.prelude}if(gt(${p.sat},${EPS}),${clipRound(`-255*${p.mn}/${p.sat}`, 0, 255)},0)`;
};
/** The U code of the colour stretched to saturation 1 (the V code with the inputs swapped); grey stays grey. */
const stretchedUExpr = (r: RangeCodes) => (u: string, v: string) => {
  const p = chromaParts(r, u, v);
  return `${p.prelude}if(gt(${p.sat},${EPS}),${clipRound(`128+${r.cs}*${p.cu}/${p.sat}`, 0, 255)},128)`;
};
const stretchedVExpr = (r: RangeCodes) => (u: string, v: string) => {
  const p = chromaParts(r, u, v);
  return `${p.prelude}if(gt(${p.sat},${EPS}),${clipRound(`128+${r.cs}*${p.cv}/${p.sat}`, 0, 255)},128)`;
};
/** 255 * Q(l, a): l a luma code, a = 255 * Lum of the stretched colour. */
const clipColorExpr = (r: RangeCodes) => (a: string, l: string) => {
  const ln = `clip((${l}-${r.y0})/${r.ys},0,1)`;
  const an = `(${a}/255)`;
  return clipRound(`255*min(min(1,${ln}/max(${an},${EPS})),(1-${ln})/max(1-${an},${EPS}))`, 0, 255);
};
/** A stretched chroma code scaled by t / 255. */
const scaleChromaExpr = (c: string, t: string) => clipRound(`128+(${c}-128)*${t}/255`, 0, 255);
const minExpr = (p: string, q: string) => `min(${p},${q})`;

/** How the frames the program reads and writes are laid out. */
export interface PlaneLayout {
  range: YuvRange;
  /**
   * Chroma at half size both ways (4:2:0, video frames): the chroma steps then look up a quarter
   * of the pixels, and ClipColor reads the luma averaged over each 2x2 block, as the chroma it
   * scales covers that block. Omitted: 4:4:4.
   */
  halfChroma?: { width: number; height: number };
}

/**
 * The blend of a YUV backdrop patch (`backdrop`, a frame for every video frame) with a YUVA
 * watermark of the same size and layout (`source`, one still frame) into [out]: YUVA carrying the
 * watermark's alpha, for `overlay` to composite onto the backdrop.
 */
export function nonSeparableBlend(
  mode: NonSeparableMode,
  layout: PlaneLayout,
  backdrop: string,
  source: string,
  out: string,
  id: string,
): string[] {
  const r = RANGES[layout.range];
  const p = new PlaneProgram(id);
  const b = p.planes(backdrop, ['y', 'u', 'v']);
  const s = p.planes(source, ['y', 'u', 'v', 'a']);
  const dirSide = mode === 'luminosity' || mode === 'saturation' ? b : s;
  const satSide = mode === 'luminosity' || mode === 'hue' ? b : s;
  const l = mode === 'luminosity' ? s.y : b.y;

  const dirU = p.lut2('dirU', dirSide.u, dirSide.v, stretchedUExpr(r));
  const dirV = p.lut2('dirV', dirSide.u, dirSide.v, stretchedVExpr(r));
  const a = p.lut2('a', dirSide.u, dirSide.v, stretchedLumExpr(r));
  const sat = p.lut2('sat', satSide.u, satSide.v, satExpr(r));
  const half = layout.halfChroma;
  const lAtChroma = half ? p.scale('lq', l, half.width, half.height) : l;
  const q = p.lut2('q', a, lAtChroma, clipColorExpr(r));
  const t = p.lut2('t', q, sat, minExpr);
  const u = p.lut2('uo', dirU, t, scaleChromaExpr);
  const v = p.lut2('vo', dirV, t, scaleChromaExpr);
  // The watermark is one frame: the steps above that read only its planes run once, and lut2
  // repeats their result for every video frame. mergeplanes would stop at the end of such an input,
  // so the watermark planes it takes are first paired with every video frame (b.y is the clock).
  const perFrame = (name: string, plane: Plane) => p.lut2(name, b.y, plane, (_x, y) => y);
  const luma = mode === 'luminosity' ? perFrame('ly', l) : l;
  return p.emit([luma, u, v, perFrame('alpha', s.a)], `mergeplanes=0x00102030:${half ? 'yuva420p' : 'yuva444p'}[${out}]`);
}

// ---- a small builder: planes out of frames, lut2 and scale steps, a split wherever a plane is read twice

interface Plane {
  key: string;
}

interface Step {
  inputs: Plane[];
  filter: string; // lut2=... or scale=...
  out: Plane;
}

class PlaneProgram {
  private readonly frames: Array<{ label: string; planes: Array<{ name: string; plane: Plane }> }> = [];
  private readonly steps: Step[] = [];

  constructor(private readonly id: string) {}

  planes<N extends string>(frame: string, names: readonly N[]): Record<N, Plane> {
    const planes = names.map((name) => ({ name, plane: { key: `${frame}_${name}` } }));
    this.frames.push({ label: frame, planes });
    return Object.fromEntries(planes.map(({ name, plane }) => [name, plane])) as Record<N, Plane>;
  }

  /** out = f(x, y) over the code values of p (x) and q (y). */
  lut2(name: string, p: Plane, q: Plane, f: (x: string, y: string) => string): Plane {
    const out = { key: name };
    this.steps.push({ inputs: [p, q], filter: `lut2=c0='${f('x', 'y')}'`, out });
    return out;
  }

  /** The plane resized, each output pixel the mean of the pixels it covers. */
  scale(name: string, p: Plane, width: number, height: number): Plane {
    const out = { key: name };
    // scale keeps the display aspect by changing the SAR when the ratio is not exact; mergeplanes
    // takes this plane's descendants together with unscaled ones and refuses differing SARs.
    this.steps.push({ inputs: [p], filter: `scale=${width}:${height}:flags=area,setsar=1`, out });
    return out;
  }

  /** The graph: extract the planes read, the steps in order, then `tail` reading `outputs`. */
  emit(outputs: Plane[], tail: string): string[] {
    const reads = new Map<Plane, number>();
    const read = (pl: Plane) => reads.set(pl, (reads.get(pl) ?? 0) + 1);
    for (const st of this.steps) st.inputs.forEach(read);
    outputs.forEach(read);

    const label = (pl: Plane) => `ns_${pl.key}_${this.id}`;
    const taken = new Map<Plane, number>();
    const use = (pl: Plane) => {
      const i = taken.get(pl) ?? 0;
      taken.set(pl, i + 1);
      return reads.get(pl)! > 1 ? `[${label(pl)}_${i}]` : `[${label(pl)}]`;
    };
    const produced = (pl: Plane, into: string[]) => {
      const n = reads.get(pl)!;
      if (n > 1) into.push(`[${label(pl)}]split=${n}${Array.from({ length: n }, (_, k) => `[${label(pl)}_${k}]`).join('')}`);
    };

    const graph: string[] = [];
    const order = ['y', 'u', 'v', 'a']; // extractplanes names its outputs in plane order
    for (const frame of this.frames) {
      const used = frame.planes.filter(({ plane }) => reads.has(plane)).sort((m, n) => order.indexOf(m.name) - order.indexOf(n.name));
      graph.push(
        `[${frame.label}]extractplanes=${used.map((x) => x.name).join('+')}${used.map(({ plane }) => `[${label(plane)}]`).join('')}`,
      );
      for (const { plane } of used) produced(plane, graph);
    }
    for (const st of this.steps) {
      graph.push(`${st.inputs.map(use).join('')}${st.filter}[${label(st.out)}]`);
      produced(st.out, graph);
    }
    graph.push(`${outputs.map(use).join('')}${tail}`);
    return graph;
  }
}
