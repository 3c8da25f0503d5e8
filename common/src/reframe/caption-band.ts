// The caption band a short gets when no one chose one: the lower third, unless the framed face sits
// there; then the top (or the middle, whichever the faces cross less). Worked out from the short's
// stored path and detections when they are stored (the coordinator keeps it as the short's
// `captionBand`), so the studio's preview and the render read the same band.
import { resolveCaptionStyle, type StyleItem } from '../render/presets.js';
import { interpolate } from './camera.js';
import { stackedPanels } from './panels.js';
import type { Box, Reframe, ReframeLayout, ShortDetections } from './types.js';

export type CaptionBand = 'top' | 'center' | 'bottom';

/** Each band as a span of the output's height (fractions, top to bottom). */
const BANDS: Record<CaptionBand, [number, number]> = { top: [0, 1 / 3], center: [1 / 3, 2 / 3], bottom: [2 / 3, 1] };
/** A face is "in" a band when at least this part of its height lies there (a chin grazing it is not). */
const FACE_PART = 1 / 3;
/** The captions move when a face is in the lower third for at least this part of the short's sampled moments. */
const MOVE_AT_SHARE = 0.25;

/** The band for a short's captions that keeps them off the framed faces, on an output of this size. */
export function captionBandFor(
  reframe: Reframe | null | undefined,
  detections: ShortDetections | null | undefined,
  output: { width: number; height: number },
): CaptionBand {
  if (!reframe?.keyframes?.length || !detections?.tracks?.length) return 'bottom';
  const start = reframe.segments[0]?.start ?? reframe.keyframes[0]!.time;
  const end = reframe.segments.at(-1)?.end ?? reframe.keyframes.at(-1)!.time;
  if (!(end > start)) return 'bottom';
  // The faces the path frames at each sampled moment, as spans of the output's height.
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
  const momentsIn = (band: CaptionBand) => [...moments.values()].filter((spans) => spans.some((span) => inBand(span, band))).length;
  if (momentsIn('bottom') / total < MOVE_AT_SHARE) return 'bottom';
  return momentsIn('center') < momentsIn('top') ? 'center' : 'top';
}

function inBand([top, bottom]: [number, number], band: CaptionBand): boolean {
  const [from, to] = BANDS[band];
  const overlap = Math.min(bottom, to) - Math.max(top, from);
  return overlap > 0 && overlap >= FACE_PART * (bottom - top);
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
 * The style items a render uses: as given, plus the short's band when it is not the lower third, no
 * item places the captions, and the caption preset itself leaves them at the bottom.
 */
export function withCaptionBand(
  items: StyleItem[] | null | undefined,
  captionPreset: string | null | undefined,
  band: CaptionBand | null | undefined,
): StyleItem[] | undefined {
  if (!band || band === 'bottom' || namesCaptionPosition(items)) return items ?? undefined;
  let anchor: string;
  try {
    anchor = resolveCaptionStyle(captionPreset || 'DEFAULT', null).position.anchor;
  } catch {
    return items ?? undefined;
  }
  if (anchor !== 'bottom') return items ?? undefined;
  return [...(items ?? []), { property: 'position', value: band }];
}
