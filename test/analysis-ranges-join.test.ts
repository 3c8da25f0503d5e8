// Which speech spans each range of a long source decodes, and how the ranges' words are joined
// (common/src/text/ranges.ts); the ranges end to end, against a whole-file analysis, are in
// analysis-ranges.test.ts.
import test from 'ava';
import { joinRanges, planSpanRanges } from '@shorts/common/text/ranges';
import type { Word } from '@shorts/common/text/transcript';

const w = (text: string, start: number, end: number): Word => ({ text, start, end });
const span = (startSec: number, endSec: number) => ({ startSample: startSec * 16_000, endSample: endSec * 16_000 });

test('ranges are runs of whole speech spans up to the range length; a longer span is a range of its own', (t) => {
  const spans = [span(0.5, 9), span(9, 14), span(14, 26), span(26, 29), span(31, 70), span(71, 75)];
  const ranges = planSpanRanges(spans, 15 * 16_000);
  t.deepEqual(ranges, [[span(0.5, 9), span(9, 14)], [span(14, 26), span(26, 29)], [span(31, 70)], [span(71, 75)]]);
  // Every span in exactly one range, in order.
  t.deepEqual(ranges.flat(), spans);
  t.deepEqual(planSpanRanges([], 15 * 16_000), []);
});

test('the join takes each word from the range that decoded it, in time order, whatever order the ranges finished in', (t) => {
  const parts = [
    { owns: { start: 14, end: 29 }, words: [w('c', 14.2, 15), w('d', 28, 28.8)] },
    { owns: { start: 0.5, end: 14 }, words: [w('a', 1, 2), w('b', 12, 13.9)] },
    { owns: { start: 31, end: 70 }, words: [w('e', 31.2, 32)] },
  ];
  t.deepEqual(
    joinRanges(parts).map((x) => x.text),
    ['a', 'b', 'c', 'd', 'e'],
  );
});
