// The picture of a short from its crop path (common/src/reframe/types.ts): one filter graph that
// turns the source into output-sized frames, segment by segment. Pure: the caller runs ffmpeg.
//
// ffmpeg's crop cannot change its size mid-stream, so the clip is cut into pieces of one layout and
// one window size; within a piece the window's x/y follow the keyframes as expressions in t, and the
// pieces are trimmed from one decoded stream, scaled to the output size and concatenated.
import type { Box, Reframe, ReframeKeyframe } from '@shorts/common/reframe/types';
import { sumOf } from './filter-expression.js';

export interface ReframeTarget {
  /** Seconds on the source's clock; the graph's input starts at `start` (input seeking). */
  start: number;
  end: number;
  width: number;
  height: number;
  sourceWidth: number;
  sourceHeight: number;
  /** colour.ts toBt709Filter: run on each piece's frames once they are at the output size (where
   *  tone-mapping costs least), before anything is drawn on them. */
  toBt709?: string | null;
}

/** A piece shorter than this is folded into the one before: concat needs a few frames to time it. */
const MIN_PIECE_SEC = 0.25;
/** The blurred background of `fit` is drawn at 1/BLUR_DOWNSCALE size: the blur is then cheap. */
const BLUR_DOWNSCALE = 8;
const BLUR_MIN_SIDE = 32;

type Piece =
  | {
      from: number;
      to: number;
      layout: 'single';
      size: { width: number; height: number };
      path: Array<{ t: number; x: number; y: number }>;
    }
  | { from: number; to: number; layout: 'split' | 'stack'; panels: Box[] }
  | { from: number; to: number; layout: 'fit'; box: Box };

/**
 * Appends the reframing stage to `graph`, reading `input`, and returns the label of its output:
 * frames of exactly width x height, square pixels. Without a path (or an empty one): the largest
 * centred window of the output's aspect.
 */
export function buildReframeGraph(reframe: Reframe | null | undefined, o: ReframeTarget, graph: string[], input = '0:v'): string {
  const { width: W, height: H } = o;
  if (!(W > 0 && H > 0 && W % 2 === 0 && H % 2 === 0)) throw new Error(`output size ${W}x${H} must be positive and even`);
  const pieces = piecesOf(reframe, o);
  const chains = pieces.map((p) => pieceChain(p, o));
  if (pieces.length === 1) {
    graph.push(chains[0]!(`[${input}]`, 'reframed'));
    return 'reframed';
  }
  const labels = pieces.map((_, i) => `rf${i}`);
  graph.push(`[${input}]split=${pieces.length}${labels.map((l) => `[${l}in]`).join('')}`);
  pieces.forEach((p, i) => {
    const trim = i === pieces.length - 1 ? `trim=start=${sec(p.from)}` : `trim=start=${sec(p.from)}:end=${sec(p.to)}`;
    graph.push(chains[i]!(`[${labels[i]}in]${trim},setpts=PTS-STARTPTS,`, labels[i]!));
  });
  graph.push(`${labels.map((l) => `[${l}]`).join('')}concat=n=${pieces.length}:v=1:a=0[reframed]`);
  return 'reframed';
}

/** How many pieces the graph cuts the clip into. A render in chunks needs one: each piece restarts
 *  its clock at its first frame, which in a chunk would be another frame than in the single pass. */
export const reframePieceCount = (reframe: Reframe | null | undefined, o: ReframeTarget): number => piecesOf(reframe, o).length;

/** The filter chain of one piece: `head` (an input label, maybe a trim) to `[out]` at the output size. */
function pieceChain(p: Piece, o: ReframeTarget): (head: string, out: string) => string {
  const { width: W, height: H } = o;
  const toBt709 = o.toBt709 ? `${o.toBt709},` : '';
  const tail = `setsar=1,${toBt709}format=yuv420p`;
  // Expressions run on the piece's own clock once it is trimmed (setpts restarts it at 0).
  const local = (t: number) => t - p.from;
  switch (p.layout) {
    case 'single': {
      const x = pathExpr(p.path.map((k) => [local(k.t), k.x]));
      const y = pathExpr(p.path.map((k) => [local(k.t), k.y]));
      // exact=1: a 4:2:0 crop otherwise snaps x and y to even pixels, and a slow pan judders.
      const crop =
        x.constant && y.constant
          ? `crop=${p.size.width}:${p.size.height}:${x.expr}:${y.expr}:exact=1`
          : `crop=${p.size.width}:${p.size.height}:x='${x.expr}':y='${y.expr}':exact=1`;
      return (head, out) => `${head}${crop},scale=${W}:${H}:flags=bicubic,${tail}[${out}]`;
    }
    case 'split':
    case 'stack': {
      // split: two equal halves; stack: each panel as tall as its window is at the output's width.
      const [first] = p.panels;
      const half = p.layout === 'split' ? H / 2 : Math.min(H - 2, Math.max(2, (W * first!.height) / first!.width));
      const panelH = Math.round(half) % 2 === 0 ? Math.round(half) : Math.round(half) - 1;
      return (head, out) => {
        const a = `${out}a`;
        const b = `${out}b`;
        const [top, bottom] = p.panels;
        return (
          `${head}split=2[${a}in][${b}in];` +
          `[${a}in]crop=${top!.width}:${top!.height}:${top!.x}:${top!.y},scale=${W}:${panelH}:flags=bicubic,setsar=1[${a}];` +
          `[${b}in]crop=${bottom!.width}:${bottom!.height}:${bottom!.x}:${bottom!.y},scale=${W}:${H - panelH}:flags=bicubic,setsar=1[${b}];` +
          `[${a}][${b}]vstack=inputs=2,${tail}[${out}]`
        );
      };
    }
    case 'fit': {
      const { box } = p;
      const scale = Math.min(W / box.width, H / box.height);
      const fw = Math.max(2, Math.min(W, Math.round((box.width * scale) / 2) * 2));
      const fh = Math.max(2, Math.min(H, Math.round((box.height * scale) / 2) * 2));
      // At least BLUR_MIN_SIDE a side: boxblur refuses a radius larger than half its chroma plane.
      const bw = Math.max(BLUR_MIN_SIDE, Math.round(W / BLUR_DOWNSCALE / 2) * 2);
      const bh = Math.max(BLUR_MIN_SIDE, Math.round(H / BLUR_DOWNSCALE / 2) * 2);
      return (head, out) => {
        const bg = `${out}bg`;
        const fg = `${out}fg`;
        return (
          `${head}crop=${box.width}:${box.height}:${box.x}:${box.y},split=2[${bg}in][${fg}in];` +
          `[${bg}in]scale=${bw}:${bh}:force_original_aspect_ratio=increase,crop=${bw}:${bh},boxblur=4:2,${toBt709}scale=${W}:${H}:flags=bilinear,setsar=1[${bg}];` +
          `[${fg}in]scale=${fw}:${fh}:flags=bicubic,${toBt709}setsar=1[${fg}];` +
          `[${bg}][${fg}]overlay=${(W - fw) / 2}:${(H - fh) / 2},setsar=1,format=yuv420p[${out}]`
        );
      };
    }
  }
}

/** The path cut into pieces of one layout and window size, on the clip's clock (0 = o.start). */
function piecesOf(reframe: Reframe | null | undefined, o: ReframeTarget): Piece[] {
  const duration = o.end - o.start;
  if (!(duration > 0)) throw new Error(`bad clip range ${o.start}..${o.end}`);
  const aspect = o.width / o.height;
  const keys = (reframe?.keyframes ?? [])
    .filter((k) => [k.time, k.x, k.y, k.width, k.height].every(Number.isFinite) && k.width > 0 && k.height > 0)
    .map((k) => ({ ...k, time: k.time - o.start }));
  const segments = (reframe?.segments ?? [])
    .map((s) => ({ ...s, start: Math.max(0, s.start - o.start), end: Math.min(duration, s.end - o.start) }))
    .filter((s) => s.end > s.start)
    .sort((a, b) => a.start - b.start);
  if (!keys.length || !segments.length) {
    const box = inside(centredWindow(o.sourceWidth, o.sourceHeight, aspect), o);
    return [
      { from: 0, to: duration, layout: 'single', size: { width: box.width, height: box.height }, path: [{ t: 0, x: box.x, y: box.y }] },
    ];
  }
  segments[0]!.start = 0;
  segments.forEach((s, i) => {
    if (segments[i + 1]) s.end = segments[i + 1]!.start;
    else s.end = duration;
  });

  const pieces: Piece[] = [];
  for (const seg of segments) {
    const within = [windowAt(keys, seg.start), ...keys.filter((k) => k.time > seg.start && k.time < seg.end)];
    if ((seg.layout === 'split' || seg.layout === 'stack') && within[0]!.panels && within[0]!.panels.length >= 2) {
      pieces.push({ from: seg.start, to: seg.end, layout: seg.layout, panels: within[0]!.panels.slice(0, 2).map((b) => inside(b, o)) });
    } else if (seg.layout === 'fit') {
      pieces.push({ from: seg.start, to: seg.end, layout: 'fit', box: inside(within[0]!, o) });
    } else {
      // Runs of one window size; a size change between two keyframes is a cut at the later one.
      let run: Extract<Piece, { layout: 'single' }> | undefined;
      for (const k of within) {
        const box = inside(fitAspect(k, aspect, o), o);
        const t = Math.max(seg.start, k.time);
        if (!run || run.size.width !== box.width || run.size.height !== box.height) {
          if (run) run.to = t;
          run = { from: t, to: seg.end, layout: 'single', size: { width: box.width, height: box.height }, path: [] };
          pieces.push(run);
        }
        run.path.push({ t, x: box.x, y: box.y });
      }
    }
  }
  return mergePieces(pieces);
}

/** Folds pieces too short to time into the one before, and joins neighbours one crop can draw. */
function mergePieces(pieces: Piece[]): Piece[] {
  const out: Piece[] = [];
  for (const p of pieces) {
    const last = out[out.length - 1];
    if (last && p.to - p.from < MIN_PIECE_SEC) {
      last.to = p.to;
      continue;
    }
    if (
      last &&
      last.layout === 'single' &&
      p.layout === 'single' &&
      last.size.width === p.size.width &&
      last.size.height === p.size.height
    ) {
      // The same window size: a cut is a step in the x/y expressions.
      const end = last.path[last.path.length - 1]!;
      last.path.push({ t: p.from, x: end.x, y: end.y }, ...p.path);
      last.to = p.to;
      continue;
    }
    out.push(p);
  }
  if (out.length > 1 && out[0]!.to - out[0]!.from < MIN_PIECE_SEC) out.shift();
  if (out[0]) out[0].from = 0;
  return out;
}

/** The window at a time on the clip's clock: linear between keyframes, the later of two at one time. */
export function windowAt(keys: readonly ReframeKeyframe[], time: number): ReframeKeyframe {
  let i = 0;
  while (i + 1 < keys.length && keys[i + 1]!.time <= time) i++;
  const a = keys[i]!;
  const b = keys[i + 1];
  if (!b || time <= a.time || a.width !== b.width || a.height !== b.height) return { ...a, time };
  const f = (time - a.time) / (b.time - a.time);
  return { ...a, time, x: Math.round(a.x + (b.x - a.x) * f), y: Math.round(a.y + (b.y - a.y) * f) };
}

function centredWindow(W: number, H: number, aspect: number): Box {
  let h = H;
  let w = h * aspect;
  if (w > W) {
    w = W;
    h = w / aspect;
  }
  return { x: (W - w) / 2, y: (H - h) / 2, width: w, height: h };
}

/** A box widened or narrowed around its centre to the output's aspect (a client's or an old path). */
function fitAspect(k: Box, aspect: number, o: ReframeTarget): Box {
  if (Math.abs(k.width / k.height - aspect) < 0.01) return k;
  let h = Math.min(k.height, o.sourceHeight);
  let w = h * aspect;
  if (w > o.sourceWidth) {
    w = o.sourceWidth;
    h = w / aspect;
  }
  return { x: k.x + k.width / 2 - w / 2, y: k.y + k.height / 2 - h / 2, width: w, height: h };
}

/** Even-sized (never larger than asked, around the same centre), integer, inside the source. */
function inside(b: Box, o: ReframeTarget): Box {
  const w = Math.max(2, Math.min(Math.floor(o.sourceWidth / 2) * 2, Math.floor(b.width / 2) * 2));
  const h = Math.max(2, Math.min(Math.floor(o.sourceHeight / 2) * 2, Math.floor(b.height / 2) * 2));
  const x = Math.round(Math.min(Math.max(b.x + b.width / 2 - w / 2, 0), o.sourceWidth - w));
  const y = Math.round(Math.min(Math.max(b.y + b.height / 2 - h / 2, 0), o.sourceHeight - h));
  return { x, y, width: w, height: h };
}

/** Piecewise-linear in t without nesting: v0 + each segment's change times its progress (a step for
 *  two keyframes at one time), as sums short enough for ffmpeg's parser (a tracked walk has hundreds). */
function pathExpr(points: Array<[number, number]>): { expr: string; constant: boolean } {
  const terms = [String(points[0]![1])];
  for (let i = 1; i < points.length; i++) {
    const [t0, v0] = points[i - 1]!;
    const [t1, v1] = points[i]!;
    const dv = v1 - v0;
    if (dv === 0) continue;
    terms.push(t1 > t0 ? `${dv}*clip((t-${sec(t0)})/${sec(t1 - t0)},0,1)` : `${dv}*gte(t,${sec(t1)})`);
  }
  return { expr: sumOf(terms), constant: terms.length === 1 };
}

/** Seconds as ffmpeg options and filter expressions take them: millisecond precision, no exponent. */
export const sec = (n: number) => String(Math.round(n * 1000) / 1000);
