// How far a short's crop path can be trusted (issue 33): over the short's speech, how much of it
// detection pinned on a face on screen, how much of it the window shows some face, and where
// detection was least sure who speaks. Pure, computed with the path (planReframe) so every stored or
// re-planned path carries it.
import type { Box, Reframe, ReframeQuality, ShortDetections, TrackSample } from './types.js';
import { unionOfRanges as union, type TimeRange as Span } from '../time-ranges.js';
import { shownAt } from './window.js';

/** The speech is looked at every this many seconds for faces in the window. */
export const QUALITY_STEP_SEC = 0.1;
/** A face box may stick out of the window by this many source pixels and still count as inside. */
const INSIDE_TOLERANCE_PX = 1;

/**
 * The quality figure of a path planned from `detections`. Speech time is the union of the detected
 * speech within the short. A short with no speech has nothing to miss: both shares are 1 and there
 * is no least-sure span. A turn without a confidence counts as sure (1).
 */
export function reframeQuality(detections: ShortDetections, reframe: Reframe): ReframeQuality {
  const speech = union(clip(detections.speech, detections.start, detections.end));
  const speechSec = length(speech);
  if (!(speechSec > 1e-9)) return { speakerOnScreenShare: 1, faceInWindowShare: 1, lowestConfidenceSpan: null };

  const identified = union(detections.turns.filter((t) => t.trackId !== null));
  const speakerOnScreenShare = share(length(intersect(speech, identified)), speechSec);

  const tracks = detections.tracks.map((t) => [...t.samples].sort((a, b) => a.time - b.time));
  const reach = 1 / detections.sampleFps + 1e-6;
  let withFace = 0;
  for (const { start, end } of speech) {
    for (let k = 0; start + k * QUALITY_STEP_SEC < end - 1e-9; k++) {
      const from = start + k * QUALITY_STEP_SEC;
      const to = Math.min(end, from + QUALITY_STEP_SEC);
      const t = (from + to) / 2;
      const faces = tracks.flatMap((samples) => nearest(samples, t, reach) ?? []);
      if (faces.length && faceShown(reframe, t, faces)) withFace += to - from;
    }
  }
  const faceInWindowShare = share(withFace, speechSec);

  // The least sure turn that speaks in the short (the earliest of equals), within the short's range.
  let least: { start: number; end: number; confidence: number } | null = null;
  const turns = [...detections.turns].sort((a, b) => a.start - b.start);
  for (const turn of turns) {
    const span = clip([turn], detections.start, detections.end)[0];
    if (!span || !(length(intersect(speech, [span])) > 1e-9)) continue;
    const confidence = turn.confidence ?? 1;
    if (!least || confidence < least.confidence) least = { start: span.start, end: span.end, confidence };
  }
  return {
    speakerOnScreenShare,
    faceInWindowShare,
    lowestConfidenceSpan: least && { start: r3(least.start), end: r3(least.end), confidence: r3(least.confidence) },
  };
}

/** Whether the frame at `t` shows any of `faces`: wholly inside a window or panel, or anywhere in a fit. */
function faceShown(reframe: Reframe, t: number, faces: TrackSample[]): boolean {
  const { layout, boxes } = shownAt(reframe, t);
  if (layout === 'fit') return true; // the whole window (the picture's content) is shown
  return faces.some((f) => boxes.some((w) => inside(w, f.box)));
}

function inside(w: Box, b: Box): boolean {
  const e = INSIDE_TOLERANCE_PX;
  return b.x >= w.x - e && b.y >= w.y - e && b.x + b.width <= w.x + w.width + e && b.y + b.height <= w.y + w.height + e;
}

/** The sample of a time-sorted track nearest `t`, when within `reach` seconds of it. */
function nearest(samples: TrackSample[], t: number, reach: number): TrackSample | undefined {
  let lo = 0;
  let hi = samples.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (samples[mid]!.time < t) lo = mid + 1;
    else hi = mid;
  }
  const candidates = [samples[lo - 1], samples[lo]].filter((s): s is TrackSample => !!s && Math.abs(s.time - t) <= reach);
  return candidates.sort((a, b) => Math.abs(a.time - t) - Math.abs(b.time - t))[0];
}

function clip(spans: readonly Span[], from: number, to: number): Span[] {
  return spans.map((s) => ({ start: Math.max(from, s.start), end: Math.min(to, s.end) })).filter((s) => s.end > s.start);
}

/** The overlap of two sets of disjoint spans. */
function intersect(a: readonly Span[], b: readonly Span[]): Span[] {
  const out: Span[] = [];
  for (const x of a) {
    for (const y of b) {
      const start = Math.max(x.start, y.start);
      const end = Math.min(x.end, y.end);
      if (end > start) out.push({ start, end });
    }
  }
  return out;
}

const length = (spans: readonly Span[]) => spans.reduce((sum, s) => sum + (s.end - s.start), 0);
const share = (part: number, whole: number) => r3(Math.min(1, Math.max(0, part / whole)));
const r3 = (n: number) => Math.round(n * 1000) / 1000;
