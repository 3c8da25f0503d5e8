// The picture of a short from its crop path (common/src/reframe/types.ts): one filter graph that
// turns the source into output-sized frames, segment by segment. Pure: the caller runs ffmpeg.
//
// ffmpeg's crop cannot change its size mid-stream, so the clip is cut into pieces of one layout and
// one window size; within a piece the window's x/y follow the keyframes as expressions in t, and the
// pieces are trimmed from one decoded stream, scaled to the output size and concatenated.
import type { Reframe } from '@shorts/common/reframe/types';
import { cropPieces, type CropPiece, type ReframeTarget } from '@shorts/common/reframe/crop-pieces';
import { sumOf } from './filter-expression.js';

export { windowAt, type ReframeTarget } from '@shorts/common/reframe/crop-pieces';

/** The blurred background of `fit` is drawn at 1/BLUR_DOWNSCALE size: the blur is then cheap. */
const BLUR_DOWNSCALE = 8;
const BLUR_MIN_SIDE = 32;

/**
 * Appends the reframing stage to `graph`, reading `input`, and returns the label of its output:
 * frames of exactly width x height, square pixels. Without a path (or an empty one): the largest
 * centred window of the output's aspect.
 */
export function buildReframeGraph(
  reframe: Reframe | null | undefined,
  o: ReframeTarget,
  graph: string[],
  input = '0:v',
  chunkClockUs?: number,
): string {
  const { width: W, height: H } = o;
  if (!(W > 0 && H > 0 && W % 2 === 0 && H % 2 === 0)) throw new Error(`output size ${W}x${H} must be positive and even`);
  const pieces = cropPieces(reframe, o);
  if (pieces.length === 1) {
    graph.push(pieceChain(pieces[0]!, o, '')(`[${input}]`, 'reframed'));
    return 'reframed';
  }
  const labels = pieces.map((_, i) => `rf${i}`);
  graph.push(`[${input}]split=${pieces.length}${labels.map((l) => `[${l}in]`).join('')}`);
  pieces.forEach((p, i) => {
    const trim = i === pieces.length - 1 ? `trim=start=${sec(p.from)}` : `trim=start=${sec(p.from)}:end=${sec(p.to)}`;
    graph.push(pieceChain(p, o, 'setpts=PTS-STARTPTS,')(`[${labels[i]}in]${trim},`, labels[i]!));
  });
  // concat restarts the clock at the first frame it is given: in a chunk, that frame is the chunk's,
  // so the chunk's frames go back on the single pass's clock for the captions drawn after it.
  const back = chunkClockUs ? `,setpts=PTS+${(chunkClockUs / 1e6).toFixed(6)}/TB` : '';
  graph.push(`${labels.map((l) => `[${l}]`).join('')}concat=n=${pieces.length}:v=1:a=0${back}[reframed]`);
  return 'reframed';
}

/** How many pieces the graph cuts the clip into (pieces of several: a chunk's graph restores the
 *  single pass's clock after them, render-chunks.ts `clockUs`). */
export const reframePieceCount = (reframe: Reframe | null | undefined, o: ReframeTarget): number => cropPieces(reframe, o).length;

/**
 * The filter chain of one piece: `head` (an input label, maybe a trim) to `[out]` at the output size.
 * `restart` (the piece's clock restarted for concat) comes after a moving crop: the crop's
 * expressions read the clip's clock, which a chunk's frames carry as the single pass's do, wherever
 * in the piece the chunk starts.
 */
function pieceChain(p: CropPiece, o: ReframeTarget, restart: string): (head: string, out: string) => string {
  const { width: W, height: H } = o;
  const toBt709 = o.toBt709 ? `${o.toBt709},` : '';
  const tail = `setsar=1,${toBt709}format=yuv420p`;
  switch (p.layout) {
    case 'single': {
      const x = pathExpr(p.path.map((k) => [k.t, k.x]));
      const y = pathExpr(p.path.map((k) => [k.t, k.y]));
      // exact=1: a 4:2:0 crop otherwise snaps x and y to even pixels, and a slow pan judders.
      const crop =
        x.constant && y.constant
          ? `crop=${p.size.width}:${p.size.height}:${x.expr}:${y.expr}:exact=1`
          : `crop=${p.size.width}:${p.size.height}:x='${x.expr}':y='${y.expr}':exact=1`;
      return (head, out) => `${head}${crop},${restart}scale=${W}:${H}:flags=bicubic,${tail}[${out}]`;
    }
    case 'split':
    case 'stack': {
      // split: two equal halves; stack: each panel as tall as its window is at the output's width.
      const [first] = p.panels;
      const half = p.layout === 'split' ? H / 2 : Math.min(H - 2, Math.max(2, (W * first!.height) / first!.width));
      const panelH = Math.round(half) % 2 === 0 ? Math.round(half) : Math.round(half) - 1;
      return (head, out) => {
        head = `${head}${restart}`;
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
        head = `${head}${restart}`;
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
