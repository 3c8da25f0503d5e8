import { z } from 'zod';
import { renderOptionsSchema } from '../render/options.js';
import { directorSettingsSchema, reframeSchema, shortDetectionsSchema, framingOverrideSchema } from '../reframe/schema.js';
import { noFactsSchema, storedObjectSchema, wordSchema, type TaskContract, type TaskOutputs } from './contract.js';

// render-short: one short of a completed job, rendered at the asked size with captions and watermark.

export const renderShortPayloadSchema = z.object({
  renderId: z.string(),
  jobId: z.string(),
  shortId: z.number().int().nonnegative(),
  startTime: z.number().finite().min(0),
  endTime: z.number().finite().positive(),
  /** The transcript words that overlap the short, on the source's clock. */
  words: z.array(wordSchema),
  sourceObjectKey: z.string().min(1),
  /** The source's sound stream the analysis heard (`0:a:<n>`); the first when absent. */
  audioStream: z.number().int().nonnegative().optional(),
  output: z.object({ width: z.number().int().positive(), height: z.number().int().positive() }),
  captionPreset: z.string(),
  options: renderOptionsSchema,
  /** The crop path stored with the job's short; null for a job analysed before reframing. */
  reframe: reframeSchema.nullable(),
  /** Set when the render's director settings or output shape differ from the stored path's: the
   *  agent plans the path again from the stored detections (no new detection pass). */
  /** `overrides`: the short's framing by hand (reframe/overrides.ts), applied after planning. */
  recompute: z
    .object({ director: directorSettingsSchema, detections: shortDetectionsSchema, overrides: z.array(framingOverrideSchema).optional() })
    .nullable(),
  /** Voice activity over the short (source clock) when the render cuts silences and the analysis
   *  stored it; absent otherwise (then the words alone say where speech is). */
  speech: z.array(z.object({ start: z.number().finite(), end: z.number().finite() })).nullish(),
  /** An image of the organization's files, or a URL the agent fetches under the fetch guard. */
  watermark: z.object({ objectKey: z.string().min(1).optional(), url: z.string().min(1).optional() }).nullable(),
});

/** Added when an agent takes the task: signed URLs must be fresh. */
export const renderShortLeaseSchema = z.object({
  sourceUrl: z.string().min(1),
  watermarkObjectUrl: z.string().min(1).nullable(),
});

const timeRange = z.object({ start: z.number().finite(), end: z.number().finite() });
/** A JumpCutPlan (common/src/render/jump-cuts.ts) as a render reports it. */
export const jumpCutsSchema = z.object({
  keep: z.array(timeRange).min(1),
  cuts: z.array(timeRange.extend({ reason: z.enum(['silence', 'filler']) })),
  removedSec: z.number().finite().nonnegative(),
  fillerWords: z.array(timeRange.extend({ text: z.string() })),
});

/** A long render is done in chunks (issue 22), in three steps on agents: the render's own agent
 *  plans the cuts (`split`), render-chunk children render the video (the first also the sound),
 *  then the render is leased again to join them (`join`). Neither: one pass, as always. */
export const renderEncoderSchema = z.enum(['libx264', 'h264_nvenc']);
export type RenderEncoder = z.output<typeof renderEncoderSchema>;
export const renderSplitLeaseSchema = z.object({
  /** Chunks to cut (the farm's free render slots when it was leased) and their encoder; with the
   *  speed each chunk's agent was measured at, relative (the first chunk's is the splitting agent's
   *  own), when the coordinator knows them: the cuts give a faster agent more of the video. */
  split: z
    .object({
      chunks: z.number().int().min(2),
      encoder: renderEncoderSchema,
      speeds: z.array(z.number().finite().positive()).optional(),
    })
    .nullish(),
  /** Signed URLs of the sound and of each chunk, in order; with their object keys, so that the
   *  joining agent takes from its own disk what it rendered itself. */
  join: z
    .object({
      audioUrl: z.string().min(1).nullable(),
      chunkUrls: z.array(z.string().min(1)).min(2),
      audioObjectKey: z.string().min(1).nullish(),
      chunkObjectKeys: z.array(z.string().min(1)).nullish(),
      /** The jump cuts the split planned, for the joined render's result (its caption files). */
      jumpCuts: jumpCutsSchema.nullish(),
      /** The caption script the split stored, for the joined render's result. */
      captionsKey: z.string().min(1).nullish(),
    })
    .nullish(),
});

/** The split's result: the cuts, and whether the source has sound (the first chunk then encodes it);
 *  once the children are done (fan-in) also their chunks, in order, and the sound. A split made
 *  before the first chunk encoded the sound carries the sound itself (`audio`). */
export const renderSplitSchema = z.object({
  audio: storedObjectSchema.nullable(),
  hasSound: z.boolean().optional(),
  cuts: z
    .array(
      z.object({
        fromUs: z.number().int().nonnegative(),
        toUs: z.number().int().positive(),
        shiftTicks: z.number().int().nonnegative(),
        clockUs: z.number().int().nonnegative().optional(),
        slots: z.object({ from: z.number().int().nonnegative(), to: z.number().int().positive().optional() }).optional(),
        keepFrames: z.number().int().positive().optional(),
      }),
    )
    .min(2),
  gopFrames: z.number().int().positive(),
  encoder: renderEncoderSchema,
  chunks: z.array(z.object({ objectKey: z.string().min(1), frames: z.number().int().positive() })).optional(),
  /** The jump cuts as planned by the split (source clock), when any: the joined render reports them. */
  jumpCuts: jumpCutsSchema.nullish(),
  /** The caption script the chunks burn in, stored by the split: the joined render reports it. */
  captionsKey: z.string().min(1).nullish(),
});

export const renderShortResultSchema = z.object({
  objectKey: z.string().min(1),
  sizeBytes: z.number().int().nonnegative(),
  contentType: z.string().min(1),
  durationSec: z.number().finite().positive(),
  thumbnailKey: z.string().min(1).nullish(),
  /** The ASS caption script burned into the picture (absent when the short has no words to caption). */
  captionsKey: z.string().min(1).nullish(),
  /** The jump cuts made (source clock), when any: the render's caption files are re-timed by them. */
  jumpCuts: jumpCutsSchema.nullish(),
  // What the agent made, kept with the task for operators; the coordinator needs none of it.
  width: z.number().int().positive().optional(),
  height: z.number().int().positive().optional(),
  encoder: z.string().optional(),
});

export const RENDER_STAGES = {
  downloading: { start: 0.01, end: 0.05 },
  /** Chunked: the cuts planned. */
  splitting: { start: 0.05, end: 0.07 },
  /** Chunked: the chunks' renders, as one (the parent's progress while its children run). */
  rendering: { start: 0.07, end: 0.95 },
  /** Chunked: the chunks joined with the sound. */
  joining: { start: 0.95, end: 0.97 },
  uploading: { start: 0.97, end: 1 },
};

/** What a render stores (TaskOutputs in contract.ts), named by its render's id. The pattern admits any
 *  `render…` name of these kinds. */
export const renderShortOutputs = {
  video: (renderId: string) => `render-${renderId}.mp4`,
  thumbnail: (renderId: string) => `render-${renderId}.jpg`,
  /** The caption script the render burned in, kept so a client can read the words back. */
  captions: (renderId: string) => `render-${renderId}.ass`,
  /** A chunked render's sound, which its join reads. */
  audio: (renderId: string) => `render-${renderId}-audio.mp4`,
  pattern: /^render[A-Za-z0-9_-]*(\.mp4|\.ass|\.(jpg|png))$/,
} as const satisfies TaskOutputs;

export const renderShortContract = {
  payload: renderShortPayloadSchema,
  leasePayload: renderShortPayloadSchema.extend(renderShortLeaseSchema.shape).extend(renderSplitLeaseSchema.shape),
  facts: noFactsSchema,
  result: z.union([renderShortResultSchema, z.object({ split: renderSplitSchema })]),
  stages: RENDER_STAGES,
  needs: ['ffmpeg'],
  // Every agent encodes with libx264; an NVENC host renders several times faster.
  placement: { requires: [], prefers: ['nvenc'] },
  // A long render splits into frame-exact chunks, each rendered by its own child (issue 22).
  children: { types: ['render-chunk'], stages: { 'render-chunk': 'rendering' } },
  timeLimitSec: 3600,
  readsJobSource: true,
  outputs: renderShortOutputs,
} as const satisfies TaskContract<z.ZodType, z.ZodType, z.ZodType, z.ZodType, keyof typeof RENDER_STAGES>;

export type RenderShortPayload = z.output<typeof renderShortPayloadSchema>;
export type RenderShortLease = z.output<typeof renderShortLeaseSchema>;
export type RenderShortResult = z.output<typeof renderShortResultSchema>;
export type RenderSplit = z.output<typeof renderSplitSchema>;
