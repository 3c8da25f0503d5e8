import { resolveCaptionStyle, type ResolvedCaptionStyle, type Rgba, type StyleItem } from '@shorts/common/render/presets';

export interface Word {
  text: string;
  start: number;
  end: number;
}

/** The caption page shown at time t: the short's words cut into pages of maxWordsInPage, as the render does. */
export function pageAt(words: Word[], maxWordsInPage: number, t: number): { words: Word[]; active: number } | null {
  const size = Math.max(1, maxWordsInPage);
  for (let i = 0; i < words.length; i += size) {
    const page = words.slice(i, i + size);
    const next = words[i + size];
    const end = next ? next.start : page[page.length - 1]!.end;
    if (t >= page[0]!.start && t < end) {
      const active = page.findIndex((w, j) => t >= w.start && (j === page.length - 1 || t < page[j + 1]!.start));
      return { words: page, active };
    }
  }
  return null;
}

export const rgba = (c: Rgba) => `rgba(${c.r},${c.g},${c.b},${c.a})`;

export function styleFor(preset: string | null | undefined, items: StyleItem[] | null | undefined): ResolvedCaptionStyle {
  try {
    return resolveCaptionStyle(preset || 'DEFAULT', items);
  } catch {
    return resolveCaptionStyle('DEFAULT', null);
  }
}

/** CSS for the caption block on a preview frame `frameWidth` px wide; style lengths are design px of a 1080-px short side. */
export function captionCss(style: ResolvedCaptionStyle, frameWidth: number): Record<string, string> {
  const scale = frameWidth / 1080;
  const css: Record<string, string> = {
    fontFamily: `'${style.fontFamily}', system-ui, sans-serif`,
    fontSize: `${style.fontSizePx * scale}px`,
    fontWeight: String(style.fontWeight),
    fontStyle: style.italic ? 'italic' : 'normal',
    color: rgba(style.color),
    textTransform: style.uppercase ? 'uppercase' : 'none',
    letterSpacing: `${style.letterSpacingPx * scale}px`,
  };
  if (style.outlineWidthPx > 0) css.webkitTextStroke = `${style.outlineWidthPx * scale}px ${rgba(style.outlineColor)}`;
  if (style.outlineWidthPx > 0) css.paintOrder = 'stroke fill';
  if (style.shadow)
    css.textShadow = `${style.shadow.offsetXPx * scale}px ${style.shadow.offsetYPx * scale}px ${style.shadow.blurPx * scale}px ${rgba(style.shadow.color)}`;
  if (style.backgroundColor) {
    css.background = rgba(style.backgroundColor);
    css.padding = `${style.boxPaddingPx * scale}px`;
  }
  const margin = `${style.position.marginPx * scale}px`;
  if (style.position.anchor === 'top') css.top = margin;
  else if (style.position.anchor === 'bottom') css.bottom = margin;
  else {
    css.top = '50%';
    css.transform = 'translateY(-50%)';
  }
  return css;
}
