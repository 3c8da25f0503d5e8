import { z } from 'zod';
import { NO_OUTPUTS, noFactsSchema, type TaskContract } from './contract.js';

// probe-media: an agent ffprobes a URL. The smallest real task: it proves the lease path end to end and
// lets an operator check that an agent can reach a media source.

export const probeMediaPayloadSchema = z.object({ url: z.string().min(1) });

export const probeMediaResultSchema = z.object({
  formatName: z.string(),
  durationSec: z.number().finite().nonnegative(),
  streams: z.array(
    z.object({
      index: z.number().int().nonnegative(),
      codecType: z.string(),
      codecName: z.string(),
      width: z.number().int().positive().optional(),
      height: z.number().int().positive().optional(),
    }),
  ),
});

export const PROBE_MEDIA_STAGES = {
  downloading: { start: 0.1, end: 0.8 },
  probing: { start: 0.8, end: 1 },
};

export const probeMediaContract = {
  payload: probeMediaPayloadSchema,
  leasePayload: probeMediaPayloadSchema,
  facts: noFactsSchema,
  result: probeMediaResultSchema,
  stages: PROBE_MEDIA_STAGES,
  needs: ['ffmpeg'],
  placement: { requires: [], prefers: [] },
  timeLimitSec: 600,
  outputs: NO_OUTPUTS,
} as const satisfies TaskContract<z.ZodType, z.ZodType, z.ZodType, z.ZodType, string>;

export type ProbeMediaPayload = z.output<typeof probeMediaPayloadSchema>;
export type ProbeMediaResult = z.output<typeof probeMediaResultSchema>;
