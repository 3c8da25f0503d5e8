import { z } from 'zod';
import { NO_OUTPUTS, wordSchema, type TaskContract } from './contract.js';
import { sampleSpanSchema } from './analyze-video.js';

// analyze-range: one range of a long source's analysis (a child of analyze-video, issue 22). The
// parent stored the source and its analysis audio once, and planned the speech spans the transcriber
// decodes one at a time; a range is a run of whole spans. The child reads only those samples of the
// stored audio (one HTTP byte range), decodes each span alone, and returns its words on the source's
// timeline. The parent's final part takes every range's words (common/src/text/ranges.ts).

export const analyzeRangePayloadSchema = z.object({
  jobId: z.string(),
  /** The parent's stored analysis audio: a WAV whose PCM data starts at dataOffset. */
  audioKey: z.string().min(1),
  dataOffset: z.number().int().nonnegative(),
  sampleRate: z.number().int().positive(),
  spans: z.array(sampleSpanSchema).min(1),
  /** The job's `language` for the transcriber, where it takes one. */
  language: z.string().min(1).optional(),
});

export const analyzeRangeLeaseSchema = analyzeRangePayloadSchema.extend({
  /** The audio's signed GET URL, made at lease time. */
  audioUrl: z.string().min(1),
});

export const analyzeRangeResultSchema = z.object({
  /** From the first span's start to the last one's end, in seconds: the words are this range's alone. */
  owns: z.object({ start: z.number().finite().nonnegative(), end: z.number().finite().positive() }),
  words: z.array(wordSchema),
  language: z.string(),
  backend: z.string(),
  /** Bytes of the stored audio this range read. */
  readBytes: z.number().int().nonnegative(),
});

export const ANALYZE_RANGE_STAGES = {
  reading: { start: 0, end: 0.05 },
  transcribing: { start: 0.05, end: 1 },
};

export const analyzeRangeContract = {
  payload: analyzeRangePayloadSchema,
  leasePayload: analyzeRangeLeaseSchema,
  facts: z.object({}).strict(),
  result: analyzeRangeResultSchema,
  stages: ANALYZE_RANGE_STAGES,
  needs: ['speech-recognition'],
  // Transcription only: faces are found later, per short, by the parent's final part.
  placement: { requires: ['model:silero-vad', 'transcriber'], prefers: [] },
  timeLimitSec: 2 * 3600,
  partName: 'Range',
  outputs: NO_OUTPUTS,
} as const satisfies TaskContract<z.ZodType, z.ZodType, z.ZodType, z.ZodType, string>;

export type AnalyzeRangePayload = z.output<typeof analyzeRangePayloadSchema>;
export type AnalyzeRangeLease = z.output<typeof analyzeRangeLeaseSchema>;
export type AnalyzeRangeResult = z.output<typeof analyzeRangeResultSchema>;
