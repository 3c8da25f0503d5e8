import { buildCaptionPages } from '@shorts/common/render/caption-pages';
import { resolveCaptionStyle, type ResolvedCaptionStyle, type Rgba, type StyleItem } from '@shorts/common/render/presets';

export interface Word {
  text: string;
  start: number;
  end: number;
}

/**
 * The caption page shown at time t, paged as the render pages (buildCaptionPages: at most
 * maxWordsInPage, a new page after a pause or a sentence's end, held over short gaps), with the
 * spoken word and the seconds since it began (its pop).
 */
export function pageAt(words: Word[], maxWordsInPage: number, t: number): { words: Word[]; active: number; elapsed: number } | null {
  for (const page of buildCaptionPages(words, maxWordsInPage)) {
    if (t < page.start || t >= page.end) continue;
    // As the script's events: word i from its start (the page's for the first) to the next word's start.
    let active = 0;
    for (let j = 1; j < page.words.length; j++) if (t >= page.words[j]!.start) active = j;
    const from = active === 0 ? page.start : page.words[active]!.start;
    return { words: page.words, active, elapsed: t - from };
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
