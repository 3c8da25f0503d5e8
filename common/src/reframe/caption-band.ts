// The caption band a short gets when no one chose one: where the style puts it, unless its caption
// block (as the shared caption layout places it) crosses a framed face; then the lower third, the
// top or the middle, the first that crosses none. Worked out from the short's stored path and
// detections: for the DEFAULT style when the short is stored (its `captionBand`, which the studio's
// preview reads), and for the render's own style and size when a render is asked for (its status's
// `captionPosition`).
import { captionSpan } from '../render/caption-layout.js';
import { resolveCaptionStyle, type ResolvedCaptionStyle, type StyleItem } from '../render/presets.js';
import { interpolate } from './camera.js';
import { stackedPanels } from './panels.js';
import type { Box, Reframe, ReframeLayout, ShortDetections } from './types.js';

export type CaptionBand = 'top' | 'center' | 'bottom';

/** The order automatic placement tries bands in after the style's own place. */
const FALLBACK_ORDER: CaptionBand[] = ['bottom', 'top', 'center'];

export interface CaptionBandChoice {
  band: CaptionBand;
  /** Sampled moments of the short where the chosen band's caption crosses a framed face, and all of them. */
  covered: number;
  moments: number;
  /** Whether the band differs from where the style by itself puts the captions. */
  moved: boolean;
}

/**
 * Where automatic captions go for a short: the style's own place when its caption band (the block of
 * up to `lines` lines, the spoken word popped, where the shared caption layout puts it at this
 * output size) crosses no framed face at any sampled moment; else the first of the lower third, the
 * top and the middle that crosses none; else the one that crosses faces at the fewest moments.
 * Faces are those the path frames (the segment's tracks, where the window shows them).
 */
export function chooseCaptionBand(
  reframe: Reframe | null | undefined,
  detections: ShortDetections | null | undefined,
  output: { width: number; height: number },
  opts: { preset?: string | null; items?: StyleItem[] | null; lines?: number } = {},
): CaptionBandChoice {
  const own = styleOf(opts.preset, opts.items, null);
  const ownBand = own.position.anchor;
  const moments = framedFaceSpans(reframe, detections, output);
  if (!moments) return { band: ownBand, covered: 0, moments: 0, moved: false };
  const lines = Math.max(1, opts.lines ?? 2);
  const covering = (band: CaptionBand) => {
    const style = band === ownBand ? own : styleOf(opts.preset, opts.items, band);
    const [top, bottom] = captionSpan(style, output, lines);
    return moments.spans.filter((spans) => spans.some(([a, b]) => Math.min(b, bottom) - Math.max(a, top) > 0)).length;
  };
  let best: CaptionBandChoice | null = null;
  for (const band of [ownBand, ...FALLBACK_ORDER.filter((b) => b !== ownBand)]) {
    const covered = covering(band);
    if (!best || covered < best.covered) best = { band, covered, moments: moments.total, moved: band !== ownBand };
    if (covered === 0) break;
  }
  return best!;
}

/** The band for a short's captions in the DEFAULT style (kept as the short's `captionBand`; the studio's preview asks POST /api/render/caption-position for the band of the preset and size it shows, and shows this one until the answer comes). */
export function captionBandFor(
  reframe: Reframe | null | undefined,
  detections: ShortDetections | null | undefined,
  output: { width: number; height: number },
): CaptionBand {
  return chooseCaptionBand(reframe, detections, output).band;
}

function styleOf(preset: string | null | undefined, items: StyleItem[] | null | undefined, band: CaptionBand | null): ResolvedCaptionStyle {
  const extra: StyleItem[] = band ? [{ property: 'position', value: band }] : [];
  try {
    return resolveCaptionStyle(preset || 'DEFAULT', [...(items ?? []), ...extra]);
  } catch {
    return resolveCaptionStyle('DEFAULT', extra);
  }
}

/** The framed faces' vertical spans (fractions of the output's height) at each sampled moment with one; null without a path or faces. */
function framedFaceSpans(
  reframe: Reframe | null | undefined,
  detections: ShortDetections | null | undefined,
  output: { width: number; height: number },
): { spans: Array<Array<[number, number]>>; total: number } | null {
  if (!reframe?.keyframes?.length || !detections?.tracks?.length) return null;
  const start = reframe.segments[0]?.start ?? reframe.keyframes[0]!.time;
  const end = reframe.segments.at(-1)?.end ?? reframe.keyframes.at(-1)!.time;
  if (!(end > start)) return null;
  const moments = new Map<number, Array<[number, number]>>();
  for (const track of detections.tracks) {
    for (const sample of track.samples) {
      if (sample.time < start || sample.time >= end) continue;
      const segment = reframe.segments.find((s) => sample.time >= s.start && sample.time < s.end);
      // A segment names the faces it shows; one that names none (a fallback) shows whatever is in its window.
      if (segment?.tracks.length && !segment.tracks.includes(track.id)) continue;
      const span = faceSpan(reframe, sample.time, sample.box, segment?.layout ?? 'single', output);
      if (!span) continue;
      const spans = moments.get(sample.time) ?? [];
      spans.push(span);
      moments.set(sample.time, spans);
    }
  }
  // Every sampled moment of the short counts, with a face or without.
  const total = Math.max(moments.size, Math.round((end - start) * detections.sampleFps), 1);
  return { spans: [...moments.values()], total };
}

/** Where a source box lands vertically in the output frame (fractions of its height); null when the frame does not show it. */
function faceSpan(
  reframe: Reframe,
  time: number,
  face: Box,
  layout: ReframeLayout,
  output: { width: number; height: number },
): [number, number] | null {
  const window = interpolate(reframe.keyframes, time);
  const key = [...reframe.keyframes].reverse().find((k) => k.time <= time) ?? reframe.keyframes[0]!;
  const centreX = face.x + face.width / 2;
  const centreY = face.y + face.height / 2;
  const panels = stackedPanels(layout, { ...window, panels: key.panels }, output.width, output.height);
  if (panels) {
    const panel = panels.find(({ source: p }) => centreX >= p.x && centreX <= p.x + p.width && centreY >= p.y && centreY <= p.y + p.height);
    if (!panel) return null;
    const k = panel.height / panel.source.height;
    return span(panel.top + (face.y - panel.source.y) * k, panel.top + (face.y + face.height - panel.source.y) * k, output.height);
  }
  if (centreX < window.x || centreX > window.x + window.width) return null;
  if (layout === 'fit') {
    // The whole window fitted inside the frame, centred.
    const k = Math.min(output.width / window.width, output.height / window.height);
    const offset = (output.height - window.height * k) / 2;
    return span(offset + (face.y - window.y) * k, offset + (face.y + face.height - window.y) * k, output.height);
  }
  const k = output.height / window.height;
  return span((face.y - window.y) * k, (face.y + face.height - window.y) * k, output.height);
}

const span = (top: number, bottom: number, height: number): [number, number] | null => {
  const a = Math.max(0, top / height);
  const b = Math.min(1, bottom / height);
  return b > a ? [a, b] : null;
};

/** Whether the style items say where the captions go (then the band is theirs, not the faces'). */
export function namesCaptionPosition(items: StyleItem[] | null | undefined): boolean {
  return (items ?? []).some((it) =>
    ['position', 'top', 'bottom'].includes(
      String(it?.property ?? '')
        .trim()
        .toLowerCase(),
    ),
  );
}

/**
 * The style items a render uses: as given, plus the chosen band when no item places the captions
 * and the band is not where the style by itself puts them.
 */
export function withCaptionBand(
  items: StyleItem[] | null | undefined,
  captionPreset: string | null | undefined,
  band: CaptionBand | null | undefined,
): StyleItem[] | undefined {
  if (!band || namesCaptionPosition(items)) return items ?? undefined;
  if (styleOf(captionPreset, items, null).position.anchor === band) return items ?? undefined;
  return [...(items ?? []), { property: 'position', value: band }];
}
