import { z } from 'zod';
import { noFactsSchema, storedObjectSchema, type TaskContract, type TaskOutputs } from './contract.js';
import { renderEncoderSchema, renderShortLeaseSchema, renderShortOutputs, renderShortPayloadSchema } from './render-short.js';

// render-chunk: one stretch of a long render (issue 22), a child of its render-short. It runs the
// whole render's graph over its own frames, video only (the first chunk also encodes the render's
// sound); its parent joins the chunks with the sound.

/** Where the chunk lies: microseconds on ffmpeg's -ss clock, and the shift (video stream ticks) that
 *  puts its frames back on the single pass's clock (node-agent/src/media/render-chunks.ts). */
export const chunkCutSchema = z.object({
  fromUs: z.number().int().nonnegative(),
  toUs: z.number().int().positive(),
  shiftTicks: z.number().int().nonnegative(),
  /** The single pass's clock at the chunk's first shown frame (microseconds from the render's first,
   *  edited with jump cuts): a crop path of several pieces restores it after their concat. */
  clockUs: z.number().int().nonnegative().optional(),
  /** A variable-rate source's render: the constant-rate output frames the chunk renders, [from, to). */
  slots: z.object({ from: z.number().int().nonnegative(), to: z.number().int().positive().optional() }).optional(),
  /** The frames the chunk keeps: it renders a few more, for the encoder to see what follows. */
  keepFrames: z.number().int().positive().optional(),
});

export const renderChunkPayloadSchema = renderShortPayloadSchema.extend({
  chunk: chunkCutSchema.extend({
    index: z.number().int().nonnegative(),
    /** The render's last chunk ends as the single pass does; the others hold their last caption. */
    last: z.boolean(),
    /** Every chunk of a render has the same encoder and GOP, whatever its host has: their streams are
     *  joined as they are. */
    encoder: renderEncoderSchema,
    gopFrames: z.number().int().positive(),
    /** The first chunk also encodes the sound of the whole render, beside its video (it is planned
     *  that much shorter), so the split that comes before all chunks stays short. */
    encodesSound: z.boolean().default(false),
  }),
});

export const renderChunkResultSchema = z.object({
  objectKey: z.string().min(1),
  sizeBytes: z.number().int().nonnegative(),
  contentType: z.string().min(1),
  frames: z.number().int().positive(),
  /** Frames a second its video encoded at (the frames it ran on into too, the sound not counted):
   *  the coordinator weighs the chunks of later renders by their agents' speeds
   *  (coordinator/src/renders/render-speeds.ts). */
  encodeFps: z.number().finite().positive().optional(),
  /** The render's sound, from the chunk that encodes it (null: it encodes none). */
  audio: storedObjectSchema.nullish(),
});

export const RENDER_CHUNK_STAGES = {
  downloading: { start: 0.01, end: 0.05 },
  rendering: { start: 0.05, end: 0.95 },
  uploading: { start: 0.97, end: 1 },
};

/** What a chunk stores (TaskOutputs in contract.ts): its video, named by its index in the render, and
 *  (the first chunk) the render's sound. */
export const renderChunkOutputs = {
  chunk: (index: number) => `chunk-${index}.mp4`,
  /** The render's sound, from the first chunk (the name a split render's sound has always had). */
  sound: renderShortOutputs.audio,
  pattern: /^(chunk-\d+\.mp4|render[A-Za-z0-9_-]*-audio\.mp4)$/,
} as const satisfies TaskOutputs;

export const renderChunkContract = {
  payload: renderChunkPayloadSchema,
  leasePayload: renderChunkPayloadSchema.extend(renderShortLeaseSchema.shape),
  facts: noFactsSchema,
  result: renderChunkResultSchema,
  stages: RENDER_CHUNK_STAGES,
  needs: ['ffmpeg'],
  // An NVENC chunk requires NVENC (added per child); an x264 one runs anywhere.
  placement: { requires: [], prefers: [] },
  timeLimitSec: 3600,
  // The chunk that encodes the render's sound reads the source whole (the sound runs through all of
  // it): it goes, when it can, to the agent that holds it, the one that split the render, instead of
  // another fetching nearly the whole file before it starts (issue 35).
  readsJobSource: (payload) => (payload.chunk as { encodesSound?: boolean } | undefined)?.encodesSound === true,
  partName: 'Chunk',
  outputs: renderChunkOutputs,
} as const satisfies TaskContract<z.ZodType, z.ZodType, z.ZodType, z.ZodType, keyof typeof RENDER_CHUNK_STAGES>;

export type RenderChunkPayload = z.output<typeof renderChunkPayloadSchema>;
export type RenderChunkResult = z.output<typeof renderChunkResultSchema>;
