// Spans of time in seconds, as sets: what jump cuts (render/jump-cuts.ts) and the crop path's quality
// figure (reframe/quality.ts) both merge.

export interface TimeRange {
  start: number;
  end: number;
}

/** Overlapping or touching ranges merged into disjoint ones, in order; empty ranges dropped. */
export function unionOfRanges(ranges: readonly TimeRange[]): TimeRange[] {
  const sorted = ranges
    .filter((r) => r.end > r.start)
    .map((r) => ({ start: r.start, end: r.end }))
    .sort((a, b) => a.start - b.start);
  const out: TimeRange[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && r.start <= last.end) last.end = Math.max(last.end, r.end);
    else out.push(r);
  }
  return out;
}
