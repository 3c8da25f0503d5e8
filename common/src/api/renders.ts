// The render routes' answers (coordinator/src/api/renders.ts, contract 2.6); the studio reads their types.
import { z } from 'zod';
import { jumpCutFlagsSchema } from '../options/editing.js';

const stage = z
  .string()
  .optional()
  .describe(
    'Present when the render has waited past WAITING_NOTICE_MS with no connected agent able to run it (e.g. "waiting for a render agent")',
  );

const captionPositionFields = z.object({
  position: z.enum(['top', 'center', 'bottom']),
  chosenBy: z
    .enum(['automatic', 'style'])
    .describe(
      "'automatic': no style item placed the captions, so the render chose a band clear of the faces it frames; 'style': a `position`, `top` or `bottom` item of the request or its preset did",
    ),
  movedFromFace: z
    .boolean()
    .optional()
    .describe('Automatic only: moved from where the caption style itself puts them, to keep off a framed face'),
  faceOverlap: z
    .number()
    .optional()
    .describe(
      "Automatic only: the share (0-1) of the short's sampled moments where the captions still cross a framed face; 0 when a band clear of them all was found",
    ),
});

const captionPosition = captionPositionFields
  .optional()
  .describe('Beyond the contract: where the captions were put, and why (absent on renders asked before it was recorded)');

/** POST /api/render/caption-position: what a render asked with the same body would do with its
 *  captions, so that a preview can show the same band and style before anything is rendered. */
export const renderCaptionPlacementSchema = captionPositionFields.extend({
  captionPreset: z.string().describe('The caption preset the render would use'),
  size: z.object({ width: z.number(), height: z.number() }).describe('The output size the render would have'),
  style: z
    .array(
      z.object({
        property: z.string(),
        value: z.string(),
        active: z.object({ value: z.string(), duration: z.number().optional() }).optional(),
        past: z.object({ value: z.string(), duration: z.number().optional() }).optional(),
      }),
    )
    .describe("The style items the render would burn its captions with: the request's and its preset's, with the chosen band added"),
});
export type RenderCaptionPlacement = z.output<typeof renderCaptionPlacementSchema>;

/** GET /api/render/:renderId: queued, progress, done or error, told apart by `type`. */
export const renderStatusSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('queued'),
    status: z.literal('QUEUED'),
    queuePosition: z.number().describe('1 for the next render to start'),
    progress: z.number(),
    stage,
    captionPosition,
  }),
  z.object({ type: z.literal('progress'), progress: z.number().describe('0 to 1'), stage, captionPosition }),
  z.object({
    type: z.literal('done'),
    progress: z.number(),
    url: z.string().describe('Signed URL of the MP4; expires'),
    size: z.number().describe('Bytes'),
    length: z.number().describe("The output's seconds (shorter than the short when jump cuts removed silences or fillers)"),
    fileId: z.string().nullable().describe('The render as a file of the organization, e.g. to post it by fileId'),
    captionsUrl: z
      .string()
      .optional()
      .describe('Signed URL of the ASS caption script burned into the picture; absent for a short with no words'),
    captionPosition,
  }),
  z.object({ type: z.literal('error'), message: z.string(), code: z.string() }),
]);
export type RenderStatus = z.output<typeof renderStatusSchema>;

/** POST /api/render. */
export const createdRenderSchema = z.object({ renderId: z.string() });
export type CreatedRender = z.output<typeof createdRenderSchema>;

/** One item of GET /api/jobs/:jobId/renders: the render's short, output and style, and its status. */
export const listedRenderSchema = z.intersection(
  z.object({
    renderId: z.string(),
    shortId: z.number(),
    createdAt: z.string(),
    output: z
      .object({ width: z.number(), height: z.number() })
      .describe("The output's pixels (a done status's `size` is the file's bytes)"),
    captionPreset: z.string(),
    brandPreset: z
      .object({ id: z.string(), name: z.string().nullable() })
      .nullable()
      .describe('Its name as it is now; null when none, or since deleted'),
    thumbnailUrl: z.string().optional().describe("The first frame, as the player's poster"),
    jumpCuts: jumpCutFlagsSchema,
    layouts: z
      .array(z.string())
      .describe("The layouts of the short's crop path it was rendered with (single, split, stack, fit); empty for a centre crop"),
    shortSec: z.number().optional().describe("The short's seconds it was asked for (a done render's `length` is the output's)"),
  }),
  renderStatusSchema,
);
export type ListedRender = z.output<typeof listedRenderSchema>;

/** GET /api/jobs/:jobId/renders. */
export const renderListSchema = z.object({ data: z.array(listedRenderSchema) });
export type RenderList = z.output<typeof renderListSchema>;
