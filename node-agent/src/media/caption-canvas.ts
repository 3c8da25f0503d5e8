// Captions drawn once per change instead of once per frame.
//
// ffmpeg 5.1's `subtitles` filter composites libass's bitmaps with generic C (ff_blend_mask), about
// 16 M instructions a 1080x1920 frame for the VIRAL preset: most of what captions cost. Yet the
// caption changes on fewer than half the frames (a new word, the frames of its pop). So the
// captions are drawn onto a transparent strip of the frame's width, only on frames where they can
// change (`select`), and that strip goes onto every frame with `overlay`, whose SIMD blend costs
// a tenth as much; overlay keeps showing the last strip until the next one.
//
// overlay takes straight (not premultiplied) alpha. libass's layers drawn onto a canvas of colour K
// come out right for it where the canvas stays partly transparent only under colour K: with an
// opaque outline of colour K, a shadow (if any) of colour K, opaque fills and no box, every
// partly covered pixel of the strip is K, and every fill pixel lies on the opaque outline. Other
// styles (translucent outlines, boxes, coloured shadows) are burned into each frame as before.
import type { ResolvedCaptionStyle, Rgba } from '@shorts/common/render/presets';
import { breakLines } from '@shorts/common/render/caption-layout';
import { styleFontMetrics } from '@shorts/common/render/caption-font-files';
import { assMarginV, centiseconds, designScale, type AssEvent, type CaptionPage } from './captions.js';
import { sumOf } from './filter-expression.js';

export interface CaptionCanvas {
  /** Rows top..top+height of the frame hold every caption pixel; both even (4:2:0 chroma). */
  top: number;
  height: number;
  /** The canvas colour: the outline's. */
  colour: Rgba;
  /** ffmpeg expression for `select`: frames whose caption can differ from the frame before. */
  changes: string;
}

/** A strip taller than this share of the frame saves too little over drawing on every frame. */
const MAX_SHARE = 0.4;
/** libass sizes a font so that its line is the font size tall; marks and tails get this much more. */
const ABOVE_EM = 0.5;
const BELOW_EM = 0.3;
const MAX_EXPRESSION_CHARS = 100_000;
/** Two or more combining marks in a row can stack above any line box. */
const STACKED_MARKS = /\p{M}{2,}/u;

/**
 * Where and when to draw the captions on a canvas, or null when this style or these words must be
 * burned into each frame. `events` are the script's (buildAssEvents).
 */
export function planCaptionCanvas(
  pages: CaptionPage[],
  events: AssEvent[],
  style: ResolvedCaptionStyle,
  frame: { width: number; height: number },
): CaptionCanvas | null {
  const k = designScale(frame);
  const outline = style.outlineWidthPx * k;
  const sameRgb = (a: Rgba, b: Rgba) => a.r === b.r && a.g === b.g && a.b === b.b;
  const shadow = style.shadow;
  if (style.backgroundColor) return null;
  // Under 2 px, a fill's antialiased edge can reach past the outline onto the transparent canvas.
  if (style.outlineColor.a !== 1 || outline < 2) return null;
  if ([style.color, style.active.color, style.past.color].some((c) => c.a !== 1)) return null;
  // A blur wider than the outline makes the outline translucent under the fill's edge.
  if (shadow && (!sameRgb(shadow.color, style.outlineColor) || shadow.blurPx > style.outlineWidthPx / 2)) return null;
  if (pages.some((p) => p.words.some((w) => STACKED_MARKS.test(w.text)))) return null;
  if (events.length === 0) return null;

  // The script breaks each page's lines where the shared layout does and libass breaks nowhere else
  // (WrapStyle 2, captions.ts): the strip holds the page with the most lines, popped.
  const metrics = styleFontMetrics(style);
  const lines = Math.max(
    ...pages.map(
      (p) =>
        breakLines(
          p.words.map((w) => w.text),
          style,
          frame,
          metrics,
        ).length,
    ),
  );
  const font = style.fontSizePx * k;
  const block = lines * font * Math.max(1, style.active.scale);
  const shadowY = shadow ? shadow.offsetYPx * k : 0;
  const blurReach = shadow ? 1.5 * shadow.blurPx * k : 0;
  const above = ABOVE_EM * font + outline + Math.max(0, -shadowY) + blurReach;
  const below = BELOW_EM * font + outline + Math.max(0, shadowY) + blurReach;
  const H = frame.height;
  const marginV = assMarginV(style, frame);
  const floorEven = (v: number) => Math.max(0, Math.floor(v / 2) * 2);
  const ceilEven = (v: number) => Math.min(H, Math.ceil(v / 2) * 2);
  let top: number;
  let bottom: number;
  switch (style.position.anchor) {
    case 'bottom': {
      const base = H - marginV;
      top = floorEven(base - block - above);
      bottom = ceilEven(base + below);
      break;
    }
    case 'top': {
      const base = marginV;
      top = floorEven(base - above);
      bottom = ceilEven(base + block + below);
      break;
    }
    case 'center': {
      // Centred on the frame's middle, so libass centres the block on the canvas the same way.
      top = floorEven(H / 2 - block / 2 - Math.max(above, below));
      bottom = H - top;
      break;
    }
  }
  const height = bottom - top;
  if (height <= 0 || height > MAX_SHARE * H) return null;
  const changes = changeExpression(events);
  // One argument of ffmpeg's command line holds at most 128 KiB (about 3,800 caption events).
  if (changes.length > MAX_EXPRESSION_CHARS) return null;
  return { top, height, colour: style.outlineColor, changes };
}

/**
 * Frames whose caption may differ from the previous frame's: those whose span since the previous
 * frame (prev_t, t] meets an event's start or end or one of its changes (a transform's run, a pop's
 * step). The first frame always. Times as the script has them (centiseconds), widened by 2 ms for
 * libass's rounding to ms.
 */
export function changeExpression(events: AssEvent[]): string {
  const cs = (s: number) => centiseconds(s) / 100;
  const spans: Array<[number, number]> = [];
  for (const e of events) {
    const start = cs(e.start);
    spans.push([start, start], [cs(e.end), cs(e.end)], ...e.changes.map(([a, b]): [number, number] => [start + a, start + b]));
  }
  spans.sort((a, b) => a[0] - b[0]);
  const merged: Array<[number, number]> = [];
  for (const [a, b] of spans) {
    const last = merged[merged.length - 1];
    if (last && a <= last[1] + 0.004) last[1] = Math.max(last[1], b);
    else merged.push([a, b]);
  }
  const ms = (v: number) => Number(v.toFixed(3));
  return sumOf(['isnan(prev_t)', ...merged.map(([a, b]) => `gte(t,${ms(a - 0.002)})*lt(prev_t,${ms(b + 0.002)})`)]);
}
