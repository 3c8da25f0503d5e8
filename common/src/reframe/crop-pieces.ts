// The crop path as the render draws it (common/src/reframe/types.ts): the clip cut into pieces of one
// layout and one window size, each window even-sized, whole pixels and inside the source. The render's
// filter graph (node-agent/src/media/reframe-graph.ts) turns these into crops; the editor timelines
// (coordinator/src/timelines/) into keyframed transforms, so both show the same windows. Pure.
import { editedTime, type JumpCutPlan } from '../render/jump-cuts.js';
import type { Box, Reframe, ReframeKeyframe } from './types.js';

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
export const MIN_PIECE_SEC = 0.25;
/** One stretch of the clip drawn one way; `from`/`to` and path times on the clip's clock (0 = start). */
export type CropPiece =
  | {
      from: number;
      to: number;
      layout: 'single';
      size: { width: number; height: number };
      path: Array<{ t: number; x: number; y: number }>;
    }
  | { from: number; to: number; layout: 'split' | 'stack'; panels: Box[] }
  | { from: number; to: number; layout: 'fit'; box: Box };

/** The path cut into pieces of one layout and window size, on the clip's clock (0 = o.start). */
export function cropPieces(reframe: Reframe | null | undefined, o: ReframeTarget): CropPiece[] {
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

  const pieces: CropPiece[] = [];
  for (const seg of segments) {
    const within = [windowAt(keys, seg.start), ...keys.filter((k) => k.time > seg.start && k.time < seg.end)];
    if ((seg.layout === 'split' || seg.layout === 'stack') && within[0]!.panels && within[0]!.panels.length >= 2) {
      pieces.push({ from: seg.start, to: seg.end, layout: seg.layout, panels: within[0]!.panels.slice(0, 2).map((b) => inside(b, o)) });
    } else if (seg.layout === 'fit') {
      pieces.push({ from: seg.start, to: seg.end, layout: 'fit', box: inside(within[0]!, o) });
    } else {
      // Runs of one window size; a size change between two keyframes is a cut at the later one.
      let run: Extract<CropPiece, { layout: 'single' }> | undefined;
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
function mergePieces(pieces: CropPiece[]): CropPiece[] {
  const out: CropPiece[] = [];
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

/**
 * The crop path on the edited clock (its times are seconds from the edited clip's start). Each kept
 * range gets the window at its start and end and the keyframes inside it; at a join the window steps
 * from the one to the other at the same instant. Segments cut away vanish; a segment boundary inside
 * a cut lands on the join.
 */
export function remapReframe(reframe: Reframe | null | undefined, plan: Pick<JumpCutPlan, 'keep'>): Reframe | null {
  if (!reframe || !reframe.keyframes.length) return reframe ?? null;
  const keys = [...reframe.keyframes].sort((a, b) => a.time - b.time);
  const keyframes: ReframeKeyframe[] = [];
  for (const k of plan.keep) {
    const from = windowAt(keys, k.start);
    keyframes.push({ ...from, time: editedTime(plan, k.start) });
    for (const key of keys) if (key.time > k.start && key.time < k.end) keyframes.push({ ...key, time: editedTime(plan, key.time) });
    keyframes.push({ ...windowAt(keys, k.end), time: editedTime(plan, k.end) });
  }
  const segments = reframe.segments
    .map((s) => ({ ...s, start: editedTime(plan, s.start), end: editedTime(plan, s.end) }))
    .filter((s) => s.end > s.start);
  return { sourceWidth: reframe.sourceWidth, sourceHeight: reframe.sourceHeight, keyframes, segments };
}
