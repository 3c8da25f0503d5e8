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

test('with free slots, the ranges are a multiple of them and carry even speech, each still within the range length', (t) => {
  // A 20-minute talk's spans: 20-30 s of speech, then a pause of 0.4-2 s.
  const spans: ReturnType<typeof span>[] = [];
  for (let at = 0, i = 0; at < 1200; i++) {
    const length = 20 + ((i * 7) % 11);
    spans.push(span(at, Math.min(1200, at + length)));
    at += length + 0.4 + ((i * 3) % 17) / 10;
  }
  const speech = (r: ReturnType<typeof span>[]) => r.reduce((s, x) => s + x.endSample - x.startSample, 0) / 16_000;
  const fewest = planSpanRanges(spans, 300 * 16_000);
  t.is(fewest.length, 5, 'alone: the fewest ranges of at most 300 s');
  t.true(speech(fewest.at(-1)!) < 0.5 * speech(fewest[0]!), 'and the last one short');
  for (const parallel of [2, 3, 8]) {
    const ranges = planSpanRanges(spans, 300 * 16_000, parallel);
    t.deepEqual(ranges.flat(), spans, `${parallel} slots: every span in one range, in order`);
    t.is(ranges.length % parallel, 0, `${parallel} slots: ${ranges.length} ranges`);
    t.true(ranges.length >= fewest.length);
    for (const r of ranges) t.true(r.at(-1)!.endSample - r[0]!.startSample <= 300 * 16_000);
    const loads = ranges.map(speech);
    const even = speech(spans) / ranges.length;
    for (const load of loads)
      t.true(Math.abs(load - even) <= 30, `${parallel} slots: ${load.toFixed(0)} s of speech against ${even.toFixed(0)} s even`);
  }
  // Long silences inside an even share: that range is cut again rather than span more than the length.
  const gappy = [span(0, 20), span(400, 420), span(421, 441), span(442, 462)];
  const ranges = planSpanRanges(gappy, 300 * 16_000, 2);
  t.deepEqual(ranges.flat(), gappy);
  for (const r of ranges) t.true(r.at(-1)!.endSample - r[0]!.startSample <= 300 * 16_000);
  t.deepEqual(planSpanRanges([], 300 * 16_000, 4), []);
  t.is(planSpanRanges([span(0, 10), span(11, 20)], 300 * 16_000, 8).length, 2, 'never more ranges than spans');
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
