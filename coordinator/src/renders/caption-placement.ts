// Where a render's captions go when nothing in the request or its preset places them: clear of the
// faces the render frames, for the render's own caption style and output size
// (common/src/reframe/caption-band.ts), with as many lines as its pages take (the shared caption
// layout's line breaks). The choice is kept in the render's spec and told in its status.
import { buildCaptionPages, clipWords, type CaptionWord } from '@shorts/common/render/caption-pages';
import { breakLines } from '@shorts/common/render/caption-layout';
import { styleFontMetrics } from '@shorts/common/render/caption-font-files';
import { resolveCaptionStyle, type StyleItem } from '@shorts/common/render/presets';
import { chooseCaptionBand, namesCaptionPosition, withCaptionBand, type CaptionBand } from '@shorts/common/reframe/caption-band';
import type { Reframe, ShortDetections } from '@shorts/common/reframe/types';

/** What a render's status says about its captions' place. */
export interface RenderCaptionPosition {
  position: CaptionBand;
  /** 'automatic': chosen here, away from the framed faces; 'style': the request's or preset's style item placed them. */
  chosenBy: 'automatic' | 'style';
  /** Automatic with a framing path and stored faces only (absent otherwise): moved from where the caption style by itself puts them, to keep off a framed face. */
  movedFromFace?: boolean;
  /** Automatic only: the share of the short's sampled moments (0-1) where the captions still cross a framed face (0 where a band is clear of them all). */
  faceOverlap?: number;
}

export function placeCaptions(input: {
  preset: string;
  items: StyleItem[] | undefined;
  output: { width: number; height: number };
  reframe: Reframe | null;
  detections: ShortDetections | null;
  words: readonly CaptionWord[];
  range: { start: number; end: number };
  maxWordsInPage: number | undefined;
}): { items: StyleItem[] | undefined; position: RenderCaptionPosition } {
  if (namesCaptionPosition(input.items)) {
    return {
      items: input.items,
      position: { position: resolveCaptionStyle(input.preset, input.items).position.anchor, chosenBy: 'style' },
    };
  }
  const style = resolveCaptionStyle(input.preset, input.items);
  const font = styleFontMetrics(style);
  const pages = buildCaptionPages(clipWords(input.words, input.range.start, input.range.end), input.maxWordsInPage ?? 4);
  const lines = Math.max(
    1,
    ...pages.map(
      (p) =>
        breakLines(
          p.words.map((w) => w.text),
          style,
          input.output,
          font,
        ).length,
    ),
  );
  const choice = chooseCaptionBand(input.reframe, input.detections, input.output, { preset: input.preset, items: input.items, lines });
  return {
    items: withCaptionBand(input.items, input.preset, choice.band),
    // Without a path and stored faces there is nothing to keep clear of: the style's own place.
    position: choice.moments
      ? {
          position: choice.band,
          chosenBy: 'automatic',
          movedFromFace: choice.moved,
          faceOverlap: Math.round((choice.covered / choice.moments) * 1000) / 1000,
        }
      : { position: choice.band, chosenBy: 'automatic' },
  };
}
