// Where a long source's analysis ranges lie and how their words are joined (common/src/text/ranges.ts);
// the ranges end to end, against a whole-file analysis, are in analysis-ranges.test.ts.
import test from 'ava';
import { planRanges, planSpanRanges, stitchRanges } from '../common/src/text/ranges.js';
import type { Word } from '../common/src/text/transcript.js';

const w = (text: string, start: number, end: number): Word => ({ text, start, end });

test('ranges cover the source with the stated overlap, a short tail joining the last range', (t) => {
  t.deepEqual(planRanges(61, { rangeSec: 20, overlapSec: 6 }), [{ start: 0, end: 23 }, { start: 17, end: 43 }, { start: 37, end: 61 }]);
  t.deepEqual(planRanges(15, { rangeSec: 20, overlapSec: 6 }), [{ start: 0, end: 15 }]);
  t.deepEqual(planRanges(69, { rangeSec: 20, overlapSec: 4 }).at(-1), { start: 38, end: 69 });
});

test('the join takes each word once, cutting at a pause both ranges heard, not mid-word', (t) => {
  // Overlap 17..23: both ranges hear "b c d" (with timings a few ms apart); the widest pause near
  // 20 s is between c (ends 19.9) and d (starts 20.6). "a" is heard only by the first range, "e"
  // only by the second; the second mishears the half-word at its start edge as "x".
  const first = { range: { start: 0, end: 23 }, words: [w('a', 15, 16.5), w('b', 17.2, 18.4), w('c', 18.6, 19.9), w('d', 20.6, 22.2), w('dd', 22.5, 22.99)] };
  const second = { range: { start: 17, end: 43 }, words: [w('x', 17, 17.3), w('b', 17.21, 18.42), w('c', 18.62, 19.88), w('d', 20.61, 22.21), w('e', 22.5, 23.4), w('f', 30, 31)] };
  t.deepEqual(stitchRanges([first, second]).map((x) => x.text), ['a', 'b', 'c', 'd', 'e', 'f']);
  // A word straddling the overlap's middle with no common pause: kept once.
  const one = { range: { start: 0, end: 23 }, words: [w('long', 18, 22)] };
  const two = { range: { start: 17, end: 43 }, words: [w('long', 18.01, 22.01)] };
  t.deepEqual(stitchRanges([one, two]).map((x) => x.text), ['long']);
});


test('ranges of whole speech spans: grouped up to the range length, read from a lead-in, each word taken from the range that decoded it', (t) => {
  const spans = [{ start: 0.5, end: 9 }, { start: 9, end: 14 }, { start: 14, end: 26 }, { start: 26, end: 29 }, { start: 31, end: 70 }];
  const ranges = planSpanRanges(spans, { rangeSec: 15, leadInSec: 2.5 });
  t.deepEqual(ranges.map((r) => [r.start, r.end, r.spans.length]), [[0, 14, 2], [11.5, 29, 2], [28.5, 70, 1]]);
  // The lead-in holds the previous range's words, which this range does not decode.
  const parts = [
    { range: ranges[0]!, owns: { start: 0.5, end: 14 }, words: [w('a', 1, 2), w('b', 12, 13.9)] },
    { range: ranges[1]!, owns: { start: 14, end: 29 }, words: [w('c', 14.2, 15), w('d', 28, 28.8)] },
    { range: ranges[2]!, owns: { start: 31, end: 70 }, words: [w('e', 31.2, 32)] },
  ];
  t.deepEqual(stitchRanges(parts).map((x) => x.text), ['a', 'b', 'c', 'd', 'e']);
});
