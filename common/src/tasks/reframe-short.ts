import { z } from 'zod';
import { reframeSchema, shortDetectionsSchema } from '../reframe/schema.js';
import { storedObjectSchema, type TaskContract, type TaskOutputs } from './contract.js';
import { reframePlanSchema } from './analyze-video.js';

// reframe-short: stage 80 of one short of a long source's analysis (a child of analyze-video, issue
// 22). The parent's final part picked the shorts over the whole transcript; each short's faces,
// speakers, camera path and crop clip are then made by a child of its own, so that the farm reframes
// the shorts side by side. The child runs the very code a whole-file analysis runs for that short
// (node-agent/src/tasks/analyze-video.ts, reframeShort), on the source and analysis audio the
// parent stored, reading only the short's samples of the audio (one HTTP byte range).

export const reframeShortPayloadSchema = z.object({
  jobId: z.string(),
  /** The short's place in the job's list: its crop is named after it. */
  index: z.number().int().nonnegative(),
  start: z.number().finite().nonnegative(),
  end: z.number().finite().positive(),
  /** The source the parent stored, and its frame size. */
  source: z.object({
    objectKey: z.string().min(1),
    width: z.number().int().positive(),
    height: z.number().int().positive(),
    /** The sound stream the analysis heard; the crop clip plays it. */
    audioStream: z.number().int().nonnegative().nullish(),
  }),
  /** The parent's 16 kHz mono s16 analysis audio: a WAV whose PCM data starts at dataOffset. */
  audio: z.object({ objectKey: z.string().min(1), dataOffset: z.number().int().nonnegative(), sampleRate: z.number().int().positive() }),
  /** The director settings and crop size the path is planned for (the same for every short). */
  reframePlan: reframePlanSchema,
});

export const reframeShortLeaseSchema = reframeShortPayloadSchema.extend({
  /** Signed GET URLs, made at lease time. */
  sourceUrl: z.string().min(1),
  audioUrl: z.string().min(1),
});

export const reframeShortResultSchema = z.object({
  crop: storedObjectSchema,
  reframe: reframeSchema.nullable(),
  detections: shortDetectionsSchema,
});

export const REFRAME_SHORT_STAGES = {
  downloading: { start: 0, end: 0.1 },
  detecting_speakers: { start: 0.1, end: 0.7 },
  cropping: { start: 0.7, end: 1 },
};

/** What a short's reframing stores: its crop clip and the clip's thumbnail, named as a whole-file
 *  analysis names them (TaskOutputs in contract.ts). */
export const reframeShortOutputs = {
  short: (i: number) => `short-${i}.mp4`,
  shortThumbnail: (i: number) => `short-${i}.jpg`,
  pattern: /^short-\d+\.(mp4|jpg)$/,
} as const satisfies TaskOutputs;

export const reframeShortContract = {
  payload: reframeShortPayloadSchema,
  leasePayload: reframeShortLeaseSchema,
  facts: z.object({}).strict(),
  result: reframeShortResultSchema,
  stages: REFRAME_SHORT_STAGES,
  needs: ['ffmpeg', 'face-detector'],
  // Faces, as the analysis's own stage 80: the host where the detector runs on CUDA is preferred.
  placement: { requires: ['face-detector'], prefers: ['face-detector:cuda'] },
  timeLimitSec: 3600,
  readsJobSource: true,
  partName: 'Short',
  outputs: reframeShortOutputs,
} as const satisfies TaskContract<z.ZodType, z.ZodType, z.ZodType, z.ZodType, keyof typeof REFRAME_SHORT_STAGES>;

export type ReframeShortPayload = z.output<typeof reframeShortPayloadSchema>;
export type ReframeShortLease = z.output<typeof reframeShortLeaseSchema>;
export type ReframeShortResult = z.output<typeof reframeShortResultSchema>;
