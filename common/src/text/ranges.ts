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
 * longer span is a range of its own). On its own (`parallel` 0 or 1) the fewest such ranges; with
 * `parallel` transcription slots free, a multiple of that many ranges (at least as many, and no more
 * than there are spans) that carry even amounts of speech, so that every slot finishes its share at
 * about the same time: the ranges run side by side, and the job waits for the last one.
 */
export function planSpanRanges<S extends SampleSpan>(spans: readonly S[], rangeSamples: number, parallel = 1): S[][] {
  const fewest = groupSpans(spans, rangeSamples);
  if (parallel < 2) return fewest;
  const wanted = Math.min(spans.length, Math.ceil(fewest.length / parallel) * parallel);
  // Each range ends at the span edge nearest its even share of the speech; one that then spans more
  // than `rangeSamples` (long silences in it) is cut again, as few times as it takes.
  const speech = (span: SampleSpan) => span.endSample - span.startSample;
  const share = spans.reduce((sum, span) => sum + speech(span), 0) / wanted;
  const even: S[][] = [];
  let before = 0;
  for (const span of spans) {
    const group = even.at(-1);
    const endsHere = group && before + speech(span) / 2 > share * even.length;
    if (!group || (endsHere && even.length < wanted)) even.push([span]);
    else group.push(span);
    before += speech(span);
  }
  return even.flatMap((group) => groupSpans(group, rangeSamples));
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
