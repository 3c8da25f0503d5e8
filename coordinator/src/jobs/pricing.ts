import { PLAN_LIMITS, type Plan } from '../tenancy/plans.js';

export const MINIMUM_JOB_COST = 0.3;
const YOUTUBE_PER_GB = 0.6;
const YOUTUBE_MINIMUM = 0.1;

const cents = (n: number) => Math.round(n * 100) / 100;

export interface JobCost {
  cost: number;
  costBreakDown: { shortGen: number; youtubeProcessing: number };
}

/** The contract's price table, in credits (creditsPerDollar credits per US dollar). */
export function priceJob(
  input: { plan: Plan; durationSec: number; fromYoutube: boolean; downloadBytes: number },
  creditsPerDollar = 1,
): JobCost {
  const minutes = input.durationSec / 60;
  const shortGen = minutes * PLAN_LIMITS[input.plan].pricePerMinute;
  const youtubeProcessing = input.fromYoutube ? Math.max(YOUTUBE_MINIMUM, (input.downloadBytes / 1e9) * YOUTUBE_PER_GB) : 0;
  const total = Math.max(MINIMUM_JOB_COST, shortGen + youtubeProcessing);
  return {
    cost: cents(total * creditsPerDollar),
    costBreakDown: { shortGen: cents(shortGen * creditsPerDollar), youtubeProcessing: cents(youtubeProcessing * creditsPerDollar) },
  };
}
