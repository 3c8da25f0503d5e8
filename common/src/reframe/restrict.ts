// A short trimmed inside the range detection analysed needs no new detection pass: the faces, turns,
// speech and shots of the new range are a slice of what was found, and the camera plans from that.
import type { ShortDetections } from './types.js';

/** Within this of the analysed range's ends, a range counts as inside it (times are stored to ms). */
const EDGE_SEC = 0.001;

/** The detections of [start, end), or null when that range reaches outside what was analysed. */
export function detectionsWithin(d: ShortDetections, start: number, end: number): ShortDetections | null {
  if (!(end > start) || start < d.start - EDGE_SEC || end > d.end + EDGE_SEC) return null;
  const s = Math.max(start, d.start);
  const e = Math.min(end, d.end);
  const clip = <T extends { start: number; end: number }>(spans: readonly T[]) =>
    spans.filter((x) => x.end > s && x.start < e).map((x) => ({ ...x, start: Math.max(x.start, s), end: Math.min(x.end, e) }));
  const restricted: ShortDetections = {
    ...d,
    start: s,
    end: e,
    speech: clip(d.speech),
    turns: clip(d.turns),
    tracks: d.tracks
      .map((t) => ({ ...t, samples: t.samples.filter((x) => x.time >= s && x.time <= e) }))
      .filter((t) => t.samples.length > 0),
  };
  if (d.shots) {
    restricted.shots = clip(d.shots).map((shot) => {
      // A shot cut into by the new start opens the short: no transition into it is seen.
      if (shot.start > s) return shot;
      const { transitionEnd: _dropped, ...rest } = shot;
      return { ...rest, transition: 'start' as const };
    });
  }
  return restricted;
}
