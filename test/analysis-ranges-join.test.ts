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

/** When each of `speeds.length` slots (seconds per second of speech) runs out of ranges, taking them in order as it frees up. */
function slotsFinish(ranges: Array<Array<{ startSample: number; endSample: number }>>, speeds: number[]): number[] {
  const free = speeds.map(() => 0);
  for (const r of ranges) {
    const slot = free.indexOf(Math.min(...free));
    free[slot]! += (speeds[slot]! * r.reduce((s, x) => s + x.endSample - x.startSample, 0)) / 16_000;
  }
  return free;
}

test('with free slots, the ranges shrink as they go, so that slots running at different speeds finish together', (t) => {
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
  for (const parallel of [2, 3, 8]) {
    const ranges = planSpanRanges(spans, 300 * 16_000, parallel);
    t.deepEqual(ranges.flat(), spans, `${parallel} slots: every span in one range, in order`);
    for (const r of ranges) t.true(r.at(-1)!.endSample - r[0]!.startSample <= 300 * 16_000, `${parallel} slots: within 300 s`);
    // No range carries more than a 2 x slots-th of the talk (and a span), nor less than one span.
    for (const r of ranges) t.true(speech(r) <= speech(spans) / (2 * parallel) + 30 && r.length >= 1);
    t.is(ranges.at(-1)!.length, 1, `${parallel} slots: the last range is one span`);
    t.true(speech(ranges[0]!) >= 2 * speech(ranges.at(-1)!), `${parallel} slots: ${ranges.map(speech).map(Math.round).join(', ')} s`);
    // One slot 30 % slower than the others: they finish within one small range of each other,
    // where the fewest ranges leave one slot idle for a whole range or more.
    const speeds = Array.from({ length: parallel }, (_, i) => (i === 0 ? 0.33 : 0.25));
    const shrinking = slotsFinish(ranges, speeds);
    const spread = Math.max(...shrinking) - Math.min(...shrinking);
    t.true(spread <= 0.33 * 30, `${parallel} slots: ${spread.toFixed(1)} s between the first and the last to finish`);
    const alike = slotsFinish(fewest, speeds);
    t.true(
      Math.max(...shrinking) < Math.max(...alike),
      `${parallel} slots: done at ${Math.max(...shrinking).toFixed(0)} s, not ${Math.max(...alike).toFixed(0)} s`,
    );
  }
  // Long silences inside a share: that range is cut again rather than span more than the length.
  const gappy = [span(0, 20), span(400, 420), span(421, 441), span(442, 462)];
  const ranges = planSpanRanges(gappy, 300 * 16_000, 2);
  t.deepEqual(ranges.flat(), gappy);
  for (const r of ranges) t.true(r.at(-1)!.endSample - r[0]!.startSample <= 300 * 16_000);
  t.deepEqual(planSpanRanges([], 300 * 16_000, 4), []);
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
