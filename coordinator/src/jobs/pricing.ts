import type { PredefinedShort } from '@shorts/common/options/predefined-shorts';
import { PLAN_LIMITS, type Plan } from '../tenancy/plans.js';

/** What pricing reads of a predefined short: its times. */
type ShortSpan = Pick<PredefinedShort, 'start' | 'end'>;

export const MINIMUM_JOB_COST = 0.3;
const YOUTUBE_PER_GB = 0.6;
const YOUTUBE_MINIMUM = 0.1;

const cents = (n: number) => Math.round(n * 100) / 100;

export interface JobCost {
  cost: number;
  costBreakDown: { shortGen: number; youtubeProcessing: number; overlappingShorts?: number };
}

/**
 * Seconds of predefined shorts that overlap one another: each short is reframed on its own (face
 * detection and a crop encode of its whole length), so the time two or more of them share is
 * analysed again for each after the first. The union of the shorts lies within the source, whose
 * minutes are priced already; what is beyond it (the sum of their lengths less their union) is not.
 */
export function overlappingShortsSec(shorts: readonly ShortSpan[] | null | undefined): number {
  if (!shorts?.length) return 0;
  const sorted = [...shorts].sort((a, b) => a.start - b.start);
  let total = 0;
  let union = 0;
  let runStart = sorted[0]!.start;
  let runEnd = sorted[0]!.start;
  for (const s of sorted) {
    total += Math.max(0, s.end - s.start);
    if (s.start > runEnd) {
      union += runEnd - runStart;
      runStart = s.start;
      runEnd = s.end;
    } else runEnd = Math.max(runEnd, s.end);
  }
  union += runEnd - runStart;
  return Math.max(0, total - union);
}

/** The contract's price table, in credits (creditsPerDollar credits per US dollar): the source's
 *  minutes (those of the job's `range` when it names one), plus the minutes predefined shorts overlap (`overlappingShorts`, shown when any), at
 *  the plan's rate; a YouTube download by its size; never under the job minimum. */
export function priceJob(
  input: {
    plan: Plan;
    durationSec: number;
    fromYoutube: boolean;
    downloadBytes: number;
    predefinedShorts?: readonly ShortSpan[] | null;
    /** Only this part of the source is analysed: only its seconds are priced. */
    range?: { start: number; end: number } | null;
  },
  creditsPerDollar = 1,
): JobCost {
  const rate = PLAN_LIMITS[input.plan].pricePerMinute;
  const analysedSec = input.range
    ? Math.max(0, Math.min(input.range.end, input.durationSec) - Math.min(input.range.start, input.durationSec))
    : input.durationSec;
  const shortGen = (analysedSec / 60) * rate;
  const overlapping = (overlappingShortsSec(input.predefinedShorts) / 60) * rate;
  const youtubeProcessing = input.fromYoutube ? Math.max(YOUTUBE_MINIMUM, (input.downloadBytes / 1e9) * YOUTUBE_PER_GB) : 0;
  const total = Math.max(MINIMUM_JOB_COST, shortGen + overlapping + youtubeProcessing);
  return {
    cost: cents(total * creditsPerDollar),
    costBreakDown: {
      shortGen: cents(shortGen * creditsPerDollar),
      youtubeProcessing: cents(youtubeProcessing * creditsPerDollar),
      ...(overlapping > 0 ? { overlappingShorts: cents(overlapping * creditsPerDollar) } : {}),
    },
  };
}
