// One caption layout for the render and the studio's preview: which words share a line, the font's
// size in output pixels, where each line and word sits, and how the spoken word is styled. The
// agent writes its ASS script from it (explicit line breaks, libass does not wrap) and the studio
// draws its preview canvas from it, both measuring with the same font file (font-metrics.ts).
//
// The geometry follows libass, which places the script: a font of ASS size S has a cell of S px
// (usWinAscent + usWinDescent scaled to S); lines are stacked cells, the block is anchored by its
// cells (bottom: the last cell's bottom MarginV above the frame's bottom; top: the first cell's top
// MarginV below its top; centre: the block centred on the frame's middle), and each line is centred
// between the side margins. The spoken word's pop scales its glyphs and so its line's cell.
import type { FontMetrics } from './font-metrics.js';
import type { CaptionAnchor, ResolvedCaptionStyle, Rgba } from './presets.js';

/** Style lengths are design pixels of a frame whose short side is 1080 px: this scales them to `size`. */
export const designScale = (size: { width: number; height: number }) => Math.min(size.width, size.height) / 1080;

/** Side margins: captions keep 6 % of the frame's width clear on each side. */
export const captionMarginH = (size: { width: number }) => Math.round(size.width * 0.06);

/** The block's distance from the edge it is anchored to (none when centred), in output px. */
export function captionMarginV(style: ResolvedCaptionStyle, size: { width: number; height: number }): number {
  return style.position.anchor === 'center' ? 0 : Math.round(round2(style.position.marginPx * designScale(size)));
}

export interface CaptionLine {
  /** Indices into the page's words. */
  words: number[];
  /** Left edge and width of the line's advance box (glyph advances, not ink), output px. */
  x: number;
  width: number;
  /** Top of the line's cell and its height; the baseline is `top + ascent`. */
  top: number;
  height: number;
  baseline: number;
}

export interface PlacedWord {
  /** As drawn: the style's upper case applied. */
  text: string;
  line: number;
  x: number;
  width: number;
  /** The pop: 1 at rest. */
  scale: number;
  color: Rgba;
}

export interface CaptionLayout {
  /** The ASS Fontsize: the font's cell height in px. */
  fontSizePx: number;
  /** The em in px (CSS font-size, canvas `font`) that draws glyphs as big as libass draws them. */
  emPx: number;
  anchor: CaptionAnchor;
  marginV: number;
  marginH: number;
  lines: CaptionLine[];
  words: PlacedWord[];
  /** The union of the lines' cells: where the caption sits in the frame, output px. */
  box: { x: number; y: number; width: number; height: number };
}

export interface CaptionLayoutInput {
  words: string[];
  /** The spoken word's index, or -1. */
  active: number;
  /** Seconds since the spoken word began (its pop and the previous word's colour change); settled when omitted. */
  elapsed?: number;
  style: ResolvedCaptionStyle;
  output: { width: number; height: number };
  font: FontMetrics;
}

export const shownText = (style: ResolvedCaptionStyle, text: string) => {
  const t = text.replace(/\s+/g, ' ').trim();
  return style.uppercase ? t.toLocaleUpperCase() : t;
};

/** The ASS font size (cell height) and the em it gives, in output px. */
export function fontSizes(style: ResolvedCaptionStyle, output: { width: number; height: number }, font: FontMetrics) {
  const fontSizePx = round2(style.fontSizePx * designScale(output));
  return { fontSizePx, emPx: (fontSizePx * font.unitsPerEm) / (font.winAscent + font.winDescent) };
}

/** A run of text's advance width in px at `emPx`, with the style's letter spacing after each character. */
export function textWidth(text: string, emPx: number, font: FontMetrics, spacingPx: number): number {
  let units = 0;
  let chars = 0;
  for (const ch of text) {
    units += font.advance(ch.codePointAt(0)!);
    chars++;
  }
  return (units * emPx) / font.unitsPerEm + chars * spacingPx;
}

/**
 * Which words share a line: the fewest lines that fit between the side margins (with any of their
 * words popped), and of those the break that leaves the longest line shortest. The same for every
 * moment of a page, so a page keeps its lines while each word pops in turn.
 */
export function breakLines(
  words: string[],
  style: ResolvedCaptionStyle,
  output: { width: number; height: number },
  font: FontMetrics,
): number[][] {
  if (words.length === 0) return [];
  const { emPx } = fontSizes(style, output, font);
  const spacing = style.letterSpacingPx * designScale(output);
  const widths = words.map((w) => textWidth(shownText(style, w), emPx, font, spacing));
  const space = textWidth(' ', emPx, font, spacing);
  const max = output.width - 2 * captionMarginH(output);
  // A line must fit while any of its words pops (libass scales the spoken word, and its line with it).
  const pop = Math.max(1, style.active.scale) - 1;
  const lineWidth = (from: number, to: number) => {
    const ws = widths.slice(from, to);
    return ws.reduce((a, b) => a + b, 0) + (to - from - 1) * space + pop * Math.max(...ws);
  };
  // best[i]: the fewest lines for words i.., and the longest of them, over all breaks.
  const n = words.length;
  const best: Array<{ lines: number; longest: number; next: number }> = new Array<{ lines: number; longest: number; next: number }>(n + 1);
  best[n] = { lines: 0, longest: 0, next: n };
  for (let i = n - 1; i >= 0; i--) {
    let pick: { lines: number; longest: number; next: number } | null = null;
    for (let j = i + 1; j <= n; j++) {
      const w = lineWidth(i, j);
      // A word wider than the frame still gets a line of its own.
      if (w > max && j > i + 1) break;
      const rest = best[j]!;
      const cand = { lines: rest.lines + 1, longest: Math.max(w, rest.longest), next: j };
      if (!pick || cand.lines < pick.lines || (cand.lines === pick.lines && cand.longest < pick.longest - 1e-9)) pick = cand;
    }
    best[i] = pick!;
  }
  const lines: number[][] = [];
  for (let i = 0; i < n; i = best[i]!.next) lines.push(Array.from({ length: best[i]!.next - i }, (_, k) => i + k));
  return lines;
}

/**
 * The spoken word's pop moves in steps at most this far apart, not on every frame. Each step is one
 * picture for libass to outline and draw and for the encoder to code; a pop redrawn on every frame
 * was most of what captions cost a render (bench/README.md, "the pop in steps").
 */
export const POP_STEP_SEC = 0.06;

/**
 * The pop's steps: `atSec` after the word begins its scale becomes `scale`. The ramp from 100 % over
 * the active duration, in equal steps, each taken half-way through its stretch of the ramp (the
 * ramp rounded to the nearest step). None when the word does not change size.
 */
export function popSteps(style: ResolvedCaptionStyle): Array<{ atSec: number; scale: number }> {
  const { duration: d, scale } = style.active;
  if (scale === 1) return [];
  if (d <= 0) return [{ atSec: 0, scale }];
  const n = Math.max(1, Math.ceil(d / POP_STEP_SEC - 1e-9));
  return Array.from({ length: n }, (_, i) => ({ atSec: ((i + 0.5) / n) * d, scale: 1 + ((scale - 1) * (i + 1)) / n }));
}

/** The spoken word's scale `elapsed` s after it began: the preview's and the script's (popSteps). */
export function popScale(style: ResolvedCaptionStyle, elapsed = Infinity): number {
  let current = 1;
  for (const step of popSteps(style)) if (elapsed >= step.atSec) current = step.scale;
  return current;
}

export function wordColor(style: ResolvedCaptionStyle, j: number, active: number, elapsed = Infinity): Rgba {
  if (j === active) return style.active.color;
  if (active >= 0 && j === active - 1 && style.past.duration > 0) {
    const f = Math.min(1, Math.max(0, elapsed / style.past.duration));
    return mix(style.active.color, style.past.color, f);
  }
  return active >= 0 && j < active ? style.past.color : style.color;
}

export function layoutCaption(input: CaptionLayoutInput): CaptionLayout {
  const { words, active, style, output, font } = input;
  const { fontSizePx, emPx } = fontSizes(style, output, font);
  const spacing = style.letterSpacingPx * designScale(output);
  const space = textWidth(' ', emPx, font, spacing);
  const marginH = captionMarginH(output);
  const marginV = captionMarginV(style, output);
  const pop = popScale(style, input.elapsed);
  const ascentShare = font.winAscent / (font.winAscent + font.winDescent);

  const placed: PlacedWord[] = words.map((w, j) => {
    const text = shownText(style, w);
    const scale = j === active ? pop : 1;
    return {
      text,
      line: 0,
      x: 0,
      width: textWidth(text, emPx, font, spacing) * scale,
      scale,
      color: wordColor(style, j, active, input.elapsed),
    };
  });
  const broken = breakLines(words, style, output, font);
  const lines: CaptionLine[] = broken.map((ids, li) => {
    const width = ids.reduce((sum, j) => sum + placed[j]!.width, 0) + (ids.length - 1) * space;
    const height = fontSizePx * Math.max(...ids.map((j) => placed[j]!.scale));
    let x = marginH + (output.width - 2 * marginH - width) / 2;
    const line = { words: ids, x, width, top: 0, height, baseline: 0 };
    for (const j of ids) {
      placed[j]!.line = li;
      placed[j]!.x = x;
      x += placed[j]!.width + space;
    }
    return line;
  });
  const blockHeight = lines.reduce((sum, l) => sum + l.height, 0);
  let top =
    style.position.anchor === 'top'
      ? marginV
      : style.position.anchor === 'bottom'
        ? output.height - marginV - blockHeight
        : (output.height - blockHeight) / 2;
  for (const l of lines) {
    l.top = top;
    l.baseline = top + l.height * ascentShare;
    top += l.height;
  }
  const left = Math.min(...lines.map((l) => l.x));
  const right = Math.max(...lines.map((l) => l.x + l.width));
  const box = lines.length
    ? { x: left, y: lines[0]!.top, width: right - left, height: blockHeight }
    : { x: output.width / 2, y: output.height / 2, width: 0, height: 0 };
  return { fontSizePx, emPx, anchor: style.position.anchor, marginV, marginH, lines, words: placed, box };
}

/** The vertical span the caption can take at this size (any page of up to `lines` lines, popped), as fractions of the height. */
export function captionSpan(style: ResolvedCaptionStyle, output: { width: number; height: number }, lines: number): [number, number] {
  const fontSizePx = round2(style.fontSizePx * designScale(output));
  const block = lines * fontSizePx * Math.max(1, style.active.scale);
  const marginV = captionMarginV(style, output);
  const top =
    style.position.anchor === 'top'
      ? marginV
      : style.position.anchor === 'bottom'
        ? output.height - marginV - block
        : (output.height - block) / 2;
  return [Math.max(0, top / output.height), Math.min(1, (top + block) / output.height)];
}

const mix = (a: Rgba, b: Rgba, f: number): Rgba => ({
  r: Math.round(a.r + (b.r - a.r) * f),
  g: Math.round(a.g + (b.g - a.g) * f),
  b: Math.round(a.b + (b.b - a.b) * f),
  a: a.a + (b.a - a.a) * f,
});
const round2 = (n: number) => Math.round(n * 100) / 100;
