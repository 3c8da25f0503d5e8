// A long source's analysis in ranges (issue 22): which speech spans each range decodes, and how the
// ranges' words become one transcript. The spans are the transcriber's own plan over the whole
// audio (node-agent/src/transcribe/chunked.ts: at most 30 s each, cut in the middle of pauses), so a
// range decodes each of its spans from the same samples a whole-file run would: a recogniser's words
// depend on the audio it is given at once, and ranges cut at arbitrary times would not give the
// whole-file words (pocketsphinx heard "a second idea down" in one cut, "the second idea about" in
// another). No speech is decoded by two ranges, so none is lost or doubled at their edges.
import type { Word } from './transcript.js';

export interface SampleSpan {
  startSample: number;
  endSample: number;
}

/**
 * The spans in ranges of consecutive whole spans, each extending at most `rangeSamples` (a single
 * longer span is a range of its own). On its own (`parallel` 0 or 1) the fewest such ranges. With
 * `parallel` transcription slots free, ranges that shrink as they go (guided self-scheduling): each
 * carries a `2 x parallel`-th of the speech still left, and no less than a tenth of `rangeSamples`
 * (a range's start costs a lease and a recogniser). Slots take ranges in order as they free up, and
 * the job waits for the last one: however unevenly the slots run (a range's time varies with its
 * words and its host), they run out of work within one small range of each other.
 */
export function planSpanRanges<S extends SampleSpan>(spans: readonly S[], rangeSamples: number, parallel = 1): S[][] {
  if (parallel < 2) return groupSpans(spans, rangeSamples);
  const speech = (span: SampleSpan) => span.endSample - span.startSample;
  let left = spans.reduce((sum, span) => sum + speech(span), 0);
  const shareOfLeft = () => Math.max(left / (2 * parallel), rangeSamples / 10);
  const shrinking: S[][] = [];
  let [range, taken, share]: [S[], number, number] = [[], 0, shareOfLeft()];
  for (const span of spans) {
    // A span goes in the range when more than half of it fits in the range's share.
    if (range.length && taken + speech(span) / 2 > share) {
      shrinking.push(range);
      [range, taken, share] = [[], 0, shareOfLeft()];
    }
    range.push(span);
    taken += speech(span);
    left -= speech(span);
  }
  if (range.length) shrinking.push(range);
  // A range whose share spans more than `rangeSamples` (long silences in it) is cut again.
  return shrinking.flatMap((group) => groupSpans(group, rangeSamples));
}

/** Consecutive spans grouped while a group's extent stays within `rangeSamples`. */
function groupSpans<S extends SampleSpan>(spans: readonly S[], rangeSamples: number): S[][] {
  const groups: S[][] = [];
  for (const span of spans) {
    const group = groups.at(-1);
    if (group && span.endSample - group[0]!.startSample <= rangeSamples) group.push(span);
    else groups.push([span]);
  }
  return groups;
}

/** One range's words on the source's timeline, and the stretch it decoded. */
export interface RangeWords {
  owns: { start: number; end: number };
  words: Word[];
}

/** The ranges' words as one transcript's: each word from the range that decoded it, in time order. */
export function joinRanges(parts: readonly RangeWords[]): Word[] {
  return parts
    .flatMap((p) => p.words.filter((w) => (w.start + w.end) / 2 >= p.owns.start && (w.start + w.end) / 2 <= p.owns.end))
    .sort((a, b) => a.start - b.start);
}
