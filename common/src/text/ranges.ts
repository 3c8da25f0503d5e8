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
 * Consecutive spans grouped while a group's extent stays within `rangeSamples` (a single longer
 * span is a range of its own): the ranges in order, each its spans.
 */
export function planSpanRanges<S extends SampleSpan>(spans: readonly S[], rangeSamples: number): S[][] {
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
