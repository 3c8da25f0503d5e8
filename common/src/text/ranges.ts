// A long source's analysis in time ranges (issue 22): where the ranges lie, and how the words each
// range heard are put back into one transcript. Ranges overlap so that every word is heard whole by
// at least one of them; the join cuts each overlap once, at a pause, so no word is lost or doubled.
import type { Word } from './transcript.js';

export interface TimeRange {
  start: number;
  end: number;
}

export interface RangePlanOptions {
  /** Length of one range before its overlap (the last one may be up to half a range longer). */
  rangeSec: number;
  /** Seconds each range reads past the next one's start (and so before its own start). */
  overlapSec: number;
}

/**
 * Ranges covering [0, durationSec]: range i nominally covers [i·rangeSec, (i+1)·rangeSec] and reads
 * overlapSec/2 on each side, so neighbours share overlapSec of audio centred on their nominal edge.
 * A tail shorter than half a range joins the last range rather than being a sliver of its own.
 */
export function planRanges(durationSec: number, opts: RangePlanOptions): TimeRange[] {
  const { rangeSec, overlapSec } = opts;
  if (!(durationSec > 0) || !(rangeSec > 0) || !(overlapSec >= 0) || overlapSec >= rangeSec) {
    throw new Error(`cannot plan ranges of ${rangeSec} s overlapping ${overlapSec} s over ${durationSec} s`);
  }
  const count = Math.max(1, Math.round(durationSec / rangeSec));
  const edges = Array.from({ length: count + 1 }, (_, i) => (i === count ? durationSec : i * rangeSec));
  const half = overlapSec / 2;
  return edges.slice(0, -1).map((edge, i) => ({
    start: round3(Math.max(0, edge - half)),
    end: round3(Math.min(durationSec, edges[i + 1]! + half)),
  }));
}

/**
 * Where to cut between two overlapping ranges' words: the pause nearest the middle of their overlap
 * that both of them heard as a pause (no word of either spans it), among the wider ones. Words on
 * the left of the cut come from the earlier range, on the right from the later one: every word lies
 * on one side in both, so each is taken once. Without any common pause (speech without a breath
 * across the whole overlap) the middle is taken, and a word straddling it is kept from the range
 * that heard more of it.
 */
export function cutBetween(left: readonly Word[], right: readonly Word[], overlap: TimeRange): number {
  const middle = (overlap.start + overlap.end) / 2;
  const inOverlap = (w: Word) => w.end > overlap.start && w.start < overlap.end;
  const spans = [...left.filter(inOverlap), ...right.filter(inOverlap)].sort((a, b) => a.start - b.start);
  // Pauses: stretches of the overlap no word of either range covers.
  const pauses: TimeRange[] = [];
  let cursor = overlap.start;
  for (const w of spans) {
    if (w.start > cursor) pauses.push({ start: cursor, end: w.start });
    cursor = Math.max(cursor, w.end);
  }
  if (overlap.end > cursor) pauses.push({ start: cursor, end: overlap.end });
  // A pause at the overlap's very edge may be where one range's audio starts or stops: a word there
  // may be half-heard. Only pauses with words of both ranges' full hearing on either side count.
  const inner = pauses.filter((p) => p.start > overlap.start && p.end < overlap.end);
  if (!inner.length) return middle;
  // Prefer a real pause (a breath, 0.15 s or more) near the middle over a tight gap exactly there.
  const wide = inner.filter((p) => p.end - p.start >= 0.15);
  const candidates = wide.length ? wide : inner;
  const distance = (p: TimeRange) => Math.abs((p.start + p.end) / 2 - middle);
  const best = candidates.reduce((a, b) => (distance(b) < distance(a) ? b : a));
  return (best.start + best.end) / 2;
}

/** A range made of whole speech spans: it reads from `start` (a lead-in before its first span, so
 *  decoding starts clean) and decodes exactly `spans`. */
export interface SpanRange extends TimeRange {
  spans: TimeRange[];
}

/**
 * Ranges made of the transcriber's own speech spans (planned once over the whole audio): consecutive
 * spans are grouped until a group covers about rangeSec, so every span is decoded exactly as a
 * whole-file run decodes it and no word is heard by two ranges. Each range reads `leadInSec` before
 * its first span (the audio decoder's warm-up after a seek falls there, not in the speech).
 */
export function planSpanRanges(spans: readonly TimeRange[], opts: { rangeSec: number; leadInSec: number }): SpanRange[] {
  const groups: TimeRange[][] = [];
  for (const span of spans) {
    const group = groups.at(-1);
    if (group && span.end - group[0]!.start <= opts.rangeSec) group.push(span);
    else groups.push([span]);
  }
  return groups.map((group) => ({
    start: round3(Math.max(0, group[0]!.start - opts.leadInSec)),
    end: group.at(-1)!.end,
    spans: group,
  }));
}

/** One range's words, on the source's timeline; `owns` for a range of whole spans. */
export interface RangeWords {
  range: TimeRange;
  words: Word[];
  owns?: TimeRange;
}

/** The words of consecutive overlapping ranges as one transcript's words, each word once. */
export function stitchRanges(parts: readonly RangeWords[]): Word[] {
  if (!parts.length) return [];
  // Ranges of whole spans share no speech: each one's words are its own.
  if (parts.every((p) => p.owns)) return parts.flatMap((p) => p.words).sort((a, b) => a.start - b.start);
  const cuts = parts.slice(1).map((part, i) => {
    const before = parts[i]!;
    const overlap = { start: part.range.start, end: before.range.end };
    return overlap.end > overlap.start ? cutBetween(before.words, part.words, overlap) : part.range.start;
  });
  const out: Word[] = [];
  parts.forEach((part, i) => {
    const from = i === 0 ? -Infinity : cuts[i - 1]!;
    const to = i === parts.length - 1 ? Infinity : cuts[i]!;
    // A word belongs to the side its middle is on.
    for (const w of part.words) {
      const mid = (w.start + w.end) / 2;
      if (mid >= from && mid < to) out.push(w);
    }
  });
  return out.sort((a, b) => a.start - b.start);
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;
