// Word-by-word captions as an ASS script for libass: pages of a few words, one event per
// (page x active word) so the spoken word can have its own colour and a scale pop.
import type { CaptionPage } from '@shorts/common/render/caption-pages';
import type { ResolvedCaptionStyle, Rgba } from '@shorts/common/render/presets';
import { breakLines, captionMarginH, captionMarginV, designScale, popSteps } from '@shorts/common/render/caption-layout';
import { styleFontMetrics } from '@shorts/common/render/caption-font-files';
import { resolveFontFace } from './fonts.js';

export { buildCaptionPages, PAUSE_SEC, type CaptionPage, type CaptionWord } from '@shorts/common/render/caption-pages';

export interface AssOptions {
  width: number;
  height: number;
  /**
   * Draw onto a transparent canvas holding rows top..top+height of the frame (caption-canvas.ts)
   * instead of onto the frame itself: same pixels, shifted up by `top`.
   */
  canvas?: { top: number; height: number };
}

export { designScale };

/** One Dialogue line of the script. */
export interface AssEvent {
  layer: number;
  start: number; // seconds from the clip start
  end: number;
  style: 'Caption' | 'Box';
  text: string;
  /** When what it draws changes after `start`, in seconds after it: the run of a \t transform
   *  (a colour fading), or an instant [t, t] (a step of the pop). */
  changes: Array<[number, number]>;
}

/** The events of the script: a box per page, and per page one event per active word. */
export function buildAssEvents(pages: CaptionPage[], style: ResolvedCaptionStyle, size: Pick<AssOptions, 'width' | 'height'>): AssEvent[] {
  const k = designScale(size);
  const px = (v: number) => round2(v * k);
  const lineTags = style.shadow
    ? `\\xshad${px(style.shadow.offsetXPx)}\\yshad${px(style.shadow.offsetYPx)}${style.shadow.blurPx > 0 ? `\\blur${round2(px(style.shadow.blurPx) / 2)}` : ''}`
    : '';
  const pastMs = Math.round(style.past.duration * 1000);
  // The pop: 100 % at the word's start, then each step at once (a \t whose start is its end). A step
  // at 0 ms is no \t: libass reads a \t ending at 0 as running to the event's end.
  const steps = popSteps(style).map((st) => ({ ms: Math.round(st.atSec * 1000), scale: round2(st.scale * 100) }));
  const pop = steps.length
    ? '\\fscx100\\fscy100' +
      steps.map(({ ms, scale }) => (ms > 0 ? `\\t(${ms},${ms},\\fscx${scale}\\fscy${scale})` : `\\fscx${scale}\\fscy${scale}`)).join('')
    : '';
  const popChanges = steps.filter((st) => st.ms > 0).map((st): [number, number] => [st.ms / 1000, st.ms / 1000]);
  const events: AssEvent[] = [];

  const font = styleFontMetrics(style);
  for (const page of pages) {
    const texts = page.words.map((w) => escapeAssText(style.uppercase ? w.text.toLocaleUpperCase() : w.text));
    // The shared layout's lines (common/src/render/caption-layout.ts), the preview's too: libass
    // breaks only where \N says (WrapStyle 2).
    const lineEnds = new Set(
      breakLines(
        page.words.map((w) => w.text),
        style,
        size,
        font,
      ).map((l) => l.at(-1)!),
    );
    const join = (parts: string[]) => parts.map((p, j) => (j + 1 < parts.length ? p + (lineEnds.has(j) ? '\\N' : ' ') : p)).join('');
    if (style.backgroundColor) {
      // One run of plain text gives one box per line; per-word tags would split it into boxes that overlap.
      events.push({ layer: 0, start: page.start, end: page.end, style: 'Box', text: join(texts), changes: [] });
    }
    page.words.forEach((w, i) => {
      const start = i === 0 ? page.start : w.start;
      const end = i + 1 < page.words.length ? page.words[i + 1]!.start : page.end;
      if (end <= start) return;
      const changes: Array<[number, number]> = [];
      const parts = texts.map((t, j) => {
        if (j === i) {
          changes.push(...popChanges);
          return `{${colorTags(style.active.color)}${pop}}${t}${pop ? '{\\fscx100\\fscy100}' : ''}`;
        }
        if (j === i - 1 && pastMs > 0) {
          changes.push([0, pastMs / 1000]);
          return `{${colorTags(style.active.color)}\\t(0,${pastMs},${colorTags(style.past.color)})}${t}`;
        }
        return `{${colorTags(j < i ? style.past.color : style.color)}}${t}`;
      });
      const text = `${lineTags ? `{${lineTags}}` : ''}${join(parts)}`;
      events.push({ layer: 1, start, end, style: 'Caption', text, changes });
    });
  }
  return events;
}

/** The script's MarginV: the block's distance from the edge it is anchored to (none when centred). */
export function assMarginV(style: ResolvedCaptionStyle, size: Pick<AssOptions, 'width' | 'height'>): number {
  return captionMarginV(style, size);
}

/** A complete ASS script; PlayRes is the output size so style pixels map 1:1 after scaling. */
export function buildAssFile(pages: CaptionPage[], style: ResolvedCaptionStyle, size: AssOptions): string {
  const k = designScale(size);
  const face = resolveFontFace(style.fontFamily, style.fontWeight, style.italic);
  const px = (v: number) => round2(v * k);
  const alignment = { bottom: 2, center: 5, top: 8 }[style.position.anchor];
  let marginV = assMarginV(style, size);
  const canvas = size.canvas;
  if (canvas) {
    // The same layout on the canvas's rows: libass places a block from the edge it is anchored to
    // (a centred one from the middle, and the canvas is centred on the frame's middle).
    if (style.position.anchor === 'bottom') marginV -= size.height - (canvas.top + canvas.height);
    if (style.position.anchor === 'top') marginV -= canvas.top;
    if (marginV < 0) throw new Error(`the caption canvas (rows ${canvas.top}+${canvas.height}) does not hold the caption margin`);
  }
  const marginH = captionMarginH(size);
  const shadowDist = style.shadow ? px(Math.max(Math.abs(style.shadow.offsetXPx), Math.abs(style.shadow.offsetYPx))) : 0;
  // On a canvas (subtitles alpha=1), ffmpeg 5.1 blends a layer's alpha into the alpha plane with
  // that same alpha as the weight, so a translucent shadow of alpha a lands as a*a: give it sqrt(a).
  const shadowColor = style.shadow
    ? canvas
      ? { ...style.shadow.color, a: Math.sqrt(style.shadow.color.a) }
      : style.shadow.color
    : TRANSPARENT;
  const styleLine = (
    name: string,
    primary: string,
    outlineColour: string,
    back: string,
    borderStyle: number,
    outline: number,
    shadow: number,
  ) =>
    `Style: ${name},${face.assFontName},${px(style.fontSizePx)},${primary},${primary},${outlineColour},${back},` +
    `${face.bold ? -1 : 0},${face.italic ? -1 : 0},0,0,100,100,${px(style.letterSpacingPx)},0,${borderStyle},${outline},${shadow},` +
    `${alignment},${marginH},${marginH},${marginV},1`;

  const out = [
    '[Script Info]',
    'ScriptType: v4.00+',
    `PlayResX: ${size.width}`,
    `PlayResY: ${canvas ? canvas.height : size.height}`,
    'WrapStyle: 2',
    'ScaledBorderAndShadow: yes',
    'YCbCr Matrix: None',
    '',
    '[V4+ Styles]',
    'Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding',
    styleLine(
      'Caption',
      assColor(style.color),
      assColor(style.outlineColor),
      assColor(shadowColor),
      1,
      px(style.outlineWidthPx),
      shadowDist,
    ),
  ];
  // libass draws an opaque box (BorderStyle 3) instead of an outline, so a box is its own style on
  // a lower layer whose text is invisible; OutlineColour is the box colour there.
  if (style.backgroundColor)
    out.push(styleLine('Box', assColor(TRANSPARENT), assColor(style.backgroundColor), assColor(TRANSPARENT), 3, px(style.boxPaddingPx), 0));
  out.push('', '[Events]', 'Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text');
  for (const e of buildAssEvents(pages, style, size)) {
    out.push(`Dialogue: ${e.layer},${assTime(e.start)},${assTime(e.end)},${e.style},,0,0,0,,${e.text}`);
  }
  return out.join('\n') + '\n';
}

const TRANSPARENT: Rgba = { r: 0, g: 0, b: 0, a: 0 };

/**
 * Words are data, not markup: `{` would open an override block and `\N` would break the line.
 * libass reads `\{` and `\}` as literal braces; a word joiner after `\` keeps it from pairing up.
 */
export function escapeAssText(text: string): string {
  return text
    .replace(/[\r\n]+/g, ' ')
    .replace(/\\/g, '\\\u2060')
    .replace(/[{}]/g, (c) => `\\${c}`);
}

/** ASS colours are &HAABBGGRR with AA = transparency (00 opaque). */
export function assColor(c: Rgba): string {
  return `&H${hex(255 - Math.round(c.a * 255))}${hex(c.b)}${hex(c.g)}${hex(c.r)}`;
}

function colorTags(c: Rgba): string {
  return `\\1c&H${hex(c.b)}${hex(c.g)}${hex(c.r)}&\\1a&H${hex(255 - Math.round(c.a * 255))}&`;
}

/** A time as the script holds it: whole centiseconds, rounded, so consecutive events share exact boundaries. */
export const centiseconds = (sec: number) => Math.max(0, Math.round(sec * 100));

/** `H:MM:SS.cc`. */
export function assTime(sec: number): string {
  const cs = centiseconds(sec);
  const h = Math.floor(cs / 360000);
  const m = Math.floor((cs % 360000) / 6000);
  const s = Math.floor((cs % 6000) / 100);
  return `${h}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}.${String(cs % 100).padStart(2, '0')}`;
}

const hex = (n: number) =>
  Math.max(0, Math.min(255, Math.round(n)))
    .toString(16)
    .toUpperCase()
    .padStart(2, '0');
const round2 = (n: number) => Math.round(n * 100) / 100;
