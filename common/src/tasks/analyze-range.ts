import { z } from 'zod';
import { wordSchema, type TaskContract } from './contract.js';

const spanSchema = z.object({ start: z.number().finite().nonnegative(), end: z.number().finite().positive() });
/** The whole-source plan's speech spans this range decodes, each alone (see analyze-video's
 *  `speechSpans`); absent, the range's audio is transcribed as it is. */
const spans = z.array(spanSchema).min(1).optional();

// analyze-range: one time range of a long source's analysis (a child of analyze-video, issue 22).
// The parent stored the source once; the child reads only its range of it through a signed URL
// (ffmpeg seeks over HTTP with byte ranges), transcribes that audio and returns its words on the
// source's timeline. The parent joins the ranges' words (common/src/text/ranges.ts).

export const analyzeRangePayloadSchema = z.object({
  jobId: z.string(),
  /** The source the parent stored (its own task's object). */
  sourceKey: z.string().min(1),
  /** Seconds on the source's timeline. */
  start: z.number().finite().nonnegative(),
  end: z.number().finite().positive(),
  spans,
}).refine((p) => p.end > p.start, 'a range ends after it starts');

export const analyzeRangeLeaseSchema = z.object({
  jobId: z.string(),
  sourceKey: z.string().min(1),
  start: z.number().finite().nonnegative(),
  end: z.number().finite().positive(),
  spans,
  /** The source's signed GET URL, made at lease time. */
  sourceUrl: z.string().min(1),
});

export const analyzeRangeResultSchema = z.object({
  start: z.number().finite().nonnegative(),
  end: z.number().finite().positive(),
  /** With spans: from the first one's start to the last one's end. Its words are this range's alone;
   *  the audio before it was read only to start decoding cleanly. */
  owns: spanSchema.optional(),
  words: z.array(wordSchema),
  language: z.string(),
  backend: z.string(),
});

export const ANALYZE_RANGE_STAGES = {
  reading: { start: 0, end: 0.1 },
  transcribing: { start: 0.1, end: 1 },
};

export const analyzeRangeContract = {
  payload: analyzeRangePayloadSchema,
  leasePayload: analyzeRangeLeaseSchema,
  facts: z.object({}).strict(),
  result: analyzeRangeResultSchema,
  stages: ANALYZE_RANGE_STAGES,
  needs: ['ffmpeg', 'speech-recognition'],
  // Transcription only: faces are found later, per short, by the parent's final part.
  placement: { requires: ['model:silero-vad', 'transcriber'], prefers: [] },
  timeLimitSec: 2 * 3600,
} as const satisfies TaskContract<z.ZodType, z.ZodType, z.ZodType, z.ZodType, string>;

export type AnalyzeRangePayload = z.output<typeof analyzeRangePayloadSchema>;
export type AnalyzeRangeLease = z.output<typeof analyzeRangeLeaseSchema>;
export type AnalyzeRangeResult = z.output<typeof analyzeRangeResultSchema>;
