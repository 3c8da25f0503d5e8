// `options.predefinedShorts`, the client's own moments instead of automatically picked ones: its one
// schema and its rules. A job's request is checked here once, when it is accepted
// (coordinator/src/jobs/job-input.ts); the shorts are stored as given, in the job's options (what the
// API shows) and in the analysis task's payload (what the agent and the coordinator's outcome read),
// and checked again only against the video's length, once that is known, by `shortPastEnd`.
// `npm run lint:option-rules` keeps these rules here.
import { z } from 'zod';

/** One short as the client sends it. */
const requestedShortSchema = z.object({
  title: z.string().trim().min(1, 'title is required').max(200),
  start: z.number().finite().min(0, 'start must be 0 or more'),
  end: z.number().finite().min(0, 'end must be 0 or more'),
});

/** The option in a job request: null is "not given", as clients that serialise every field send it. */
export const predefinedShortsRequestSchema = z
  .array(requestedShortSchema)
  .max(100)
  .nullish()
  .describe("Your own moments (seconds on the source clock) instead of automatically picked ones; at most the plan's longest short each");

/** The shorts as stored once accepted (job options, analyze-video payload). */
export const predefinedShortsSchema = z.array(z.object({ title: z.string(), start: z.number().finite(), end: z.number().finite() }));
export type PredefinedShort = z.output<typeof predefinedShortsSchema>[number];

/** Seconds a short may end past the video's measured length (the probe and the client round). */
const PAST_END_TOLERANCE_SEC = 0.05;

/**
 * Why the shorts a client sent cannot be accepted on a plan whose longest short is `maxSec`, or
 * null. `pickingOption` names an automatic-picking option sent with them (they pick nothing).
 */
export function predefinedShortsProblem(
  shorts: readonly PredefinedShort[],
  limit: { plan: string; maxSec: number },
  pickingOption: string | undefined,
): string | null {
  if (shorts.length === 0) return 'options.predefinedShorts must not be empty when given';
  for (const [i, s] of shorts.entries()) {
    if (!(s.end > s.start)) return `options.predefinedShorts[${i}]: end must be greater than start`;
    if (s.end - s.start > limit.maxSec)
      return `options.predefinedShorts[${i}]: a short may last at most ${limit.maxSec} seconds on the ${limit.plan} plan (got ${Math.round((s.end - s.start) * 100) / 100})`;
  }
  if (pickingOption !== undefined)
    return `options.${pickingOption} applies to automatically picked shorts; it cannot be sent with options.predefinedShorts, which are your own times`;
  return null;
}

/** Why a short asked for does not fit a video of `durationSec` (known once it is probed), or null. */
export function shortPastEnd(shorts: readonly PredefinedShort[] | null | undefined, durationSec: number): string | null {
  const past = shorts?.find((s) => s.end > durationSec + PAST_END_TOLERANCE_SEC);
  return past ? `The short "${past.title}" ends at ${past.end} s, past the end of the video (${durationSec.toFixed(2)} s)` : null;
}

/**
 * A short's times on a transcript of `durationSec` (0: unknown): its end clamped to the video's.
 * Throws on times no accepted job holds (a payload that bypassed the request's check).
 */
export function clampedShort(item: PredefinedShort, durationSec: number): { startTime: number; endTime: number } {
  const limit = durationSec > 0 ? durationSec : Infinity;
  if (!(Number.isFinite(item.start) && Number.isFinite(item.end) && item.start >= 0 && item.end > item.start)) {
    throw new RangeError(`predefined short "${item.title}" needs 0 <= start < end, got ${item.start}..${item.end}`);
  }
  if (item.start >= limit) {
    throw new RangeError(`predefined short "${item.title}" starts at ${item.start} s, after the end of the video (${limit.toFixed(2)} s)`);
  }
  return { startTime: item.start, endTime: Math.min(item.end, limit) };
}
