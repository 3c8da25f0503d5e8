import { z } from 'zod';
import type { Api } from './http.js';
import type { Coordinator } from '../context.js';
import { framingBodySchema, setFraming } from '../jobs/framing-edits.js';
import { shortEditResponseSchema } from '@shorts/common/api/jobs';
import {
  addShort,
  addShortBodySchema,
  removeShort,
  removeShortQuerySchema,
  updateShort,
  updateShortBodySchema,
} from '../jobs/short-edits.js';
import { jobOrg } from './jobs-common.js';

const SHORT_EDIT_RULES =
  "Nothing is downloaded, transcribed or charged again. `startTime`/`endTime`: 0 <= start < end <= the source's duration, lasting at least 1 second and at most the plan's predefined-short limit (90 s on Free and Starter, 300 s on Pro and Business). The short's `text` follows its range. Reframing is planned again from the stored detections when the range lies inside what detection analysed for the short; outside it the short keeps the centre crop (`reframe` null, `reframeStale` true) and no detection pass runs. `revision` must be `data.shortsRevision` (bearer-token form): a stale one is 409, so concurrent editors never lose an edit silently. Another organization's job is 404.";

/** The edits of a completed job's shorts: add, trim or rename, frame by hand, remove. */
export function registerJobShortRoutes(api: Api, app: Coordinator): void {
  api.route(
    {
      method: 'post',
      path: '/api/jobs/:jobId/shorts',
      tag: 'Jobs',
      status: 201,
      summary: 'Add a short to a completed job',
      description:
        'The new short takes the next id (ids of removed shorts are never reused). It is reframed from the detections of any short whose analysed range covers it, else centre-cropped. ' +
        SHORT_EDIT_RULES,
      body: addShortBodySchema.meta({ example: { revision: 0, title: 'The punchline', startTime: 61.5, endTime: 88 } }),
      response: shortEditResponseSchema,
      idempotent: (ctx) => jobOrg(app, ctx, (ctx.state.body as { organizationId?: unknown } | undefined)?.organizationId),
    },
    async (ctx, { body }) => {
      const orgId = await jobOrg(app, ctx, body.organizationId);
      return addShort(app.db, orgId, ctx.params.jobId!, body);
    },
  );

  api.route(
    {
      method: 'patch',
      path: '/api/jobs/:jobId/shorts/:shortId',
      tag: 'Jobs',
      summary: 'Trim or rename a short of a completed job in place',
      description:
        'Any of `title`, `startTime`, `endTime`; the others are kept. Renders requested afterwards use the new range, words and path. ' +
        SHORT_EDIT_RULES,
      query: z.object({ organizationId: z.string().optional() }),
      body: updateShortBodySchema.meta({ example: { revision: 3, startTime: 12.5, endTime: 40 } }),
      response: shortEditResponseSchema,
    },
    async (ctx, { query, body }) => {
      const orgId = await jobOrg(app, ctx, query.organizationId ?? body.organizationId);
      return updateShort(app.db, orgId, ctx.params.jobId!, ctx.params.shortId!, body);
    },
  );

  api.route(
    {
      method: 'put',
      path: '/api/jobs/:jobId/shorts/:shortId/framing',
      tag: 'Jobs',
      summary: "Set a short's framing by hand",
      description:
        "Replaces the spans framed by hand (`overrides`, in order: of two overlapping, the later wins): `window` holds the crop window still (its centre and height; its shape is the render's), `layout` forces single, split, fit or stack, framed as the camera would, `face` makes the window follow a face track. The path is planned again around them (from the stored detections where the short has them, else from its stored path or the centre crop), served in the short's `reframe` (with `reframe.overrides`) in both retrieve forms, and followed by every later render, at any size. A trim keeps them, clipped to the new range. An empty list gives the camera its own path back. Nothing runs and nothing is charged. A span outside the short, a window outside the source, an unknown layout, or a face detection did not see in the span is 400 and changes nothing. `revision` as for the other short edits: a stale one is 409. Another organization's job is 404.",
      query: z.object({ organizationId: z.string().optional() }),
      body: framingBodySchema.meta({
        example: {
          revision: 4,
          overrides: [
            { start: 12, end: 15.5, kind: 'window', window: { x: 120, y: 0, width: 406, height: 720 } },
            { start: 20, end: 24, kind: 'layout', layout: 'fit' },
            { start: 30, end: 36, kind: 'face', trackId: 2 },
          ],
        },
      }),
      response: shortEditResponseSchema,
    },
    async (ctx, { query, body }) => {
      const orgId = await jobOrg(app, ctx, query.organizationId ?? body.organizationId);
      return setFraming(app.db, orgId, ctx.params.jobId!, ctx.params.shortId!, body);
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/api/jobs/:jobId/shorts/:shortId',
      tag: 'Jobs',
      summary: 'Remove a short from a completed job',
      description:
        "The short disappears from the job (and as a render target, 404); the other shorts keep their ids and paths, and renders already made stay. `revision` (query) as for the other short edits: a stale one is 409. Another organization's job is 404.",
      query: removeShortQuerySchema,
      response: shortEditResponseSchema,
    },
    async (ctx, { query }) => {
      const orgId = await jobOrg(app, ctx, query.organizationId);
      return removeShort(app.db, orgId, ctx.params.jobId!, ctx.params.shortId!, query.revision);
    },
  );
}
