import { z } from 'zod';
import type { Api } from './http.js';
import type { Coordinator } from '../context.js';
import { requireOrg, suppliedOrgId } from './auth-context.js';
import { renderBodySchema } from '../renders/render-request.js';
import { cancellableRender, createRender, renderStatus } from '../renders/renders.js';
import { cancelSubjectTasks } from '../tasks/cancel-subject.js';
import { listJobRenders, RENDER_LIST_LIMIT } from '../renders/render-list.js';
import { createdRenderSchema, renderListSchema, renderStatusSchema } from '@shorts/common/api/renders';

/** A short's id is its index in its job (at most 100 predefined ones); no short lies past this. */
const MAX_SHORT_ID = 10_000;

const EXAMPLE_RENDER_ID = '7e0d4c1a-92b5-4f3e-b8a7-5c6d2e1f0a93';
/** A done render as GET /api/render/:renderId gives it. */
const EXAMPLE_DONE = {
  type: 'done',
  progress: 1,
  url: `https://shorts.example.com/objects/orgs/…/render-${EXAMPLE_RENDER_ID}.mp4?expires=…&sig=…`,
  size: 5123456,
  length: 26.5,
  fileId: '3f9a2c64-1b7e-4d28-9e05-8a6b4c2d1e77',
  captionsUrl: `https://shorts.example.com/objects/orgs/…/render-${EXAMPLE_RENDER_ID}.ass?expires=…&sig=…`,
};

export function registerRenderRoutes(api: Api, app: Coordinator): void {
  api.route(
    {
      method: 'post',
      path: '/api/render',
      tag: 'Render',
      status: 201,
      summary: 'Render one short of a completed job to MP4 with captions, style and watermark',
      description:
        'Preset precedence: brandPresetId, then preset, then the active default brand preset, then platform defaults; explicit options win field by field.',
      body: renderBodySchema,
      response: createdRenderSchema,
      example: { renderId: EXAMPLE_RENDER_ID },
      idempotent: (ctx) => requireOrg(app, ctx, suppliedOrgId(ctx)),
    },
    async (ctx, { body }) => {
      const orgId = await requireOrg(app, ctx, suppliedOrgId(ctx));
      const renderId = await createRender(app, orgId, body);
      app.log.info('render queued', { renderId, jobId: body.id, organizationId: orgId });
      return { renderId };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/render/:renderId',
      tag: 'Render',
      summary: 'Render status: queued (queuePosition), progress (0-1), done (url, size, length) or error (message, code)',
      description:
        "With type `done`, `length` is the output's duration in seconds (shorter than the short when `options.editing` cut silences or filler words), and `captionsUrl` (when the short has words) " +
        'serves the ASS caption script burned into the picture, so a client can read back the words its captions said. ' +
        'While queued (or re-queued in progress), `stage` appears when the render has waited past `WAITING_NOTICE_MS` with no connected agent able to run it (for example "waiting for a render agent").',
      query: z.object({ organizationId: z.string().optional() }),
      response: renderStatusSchema,
      example: EXAMPLE_DONE,
    },
    async (ctx, { query }) => {
      const orgId = await requireOrg(app, ctx, query.organizationId);
      return renderStatus(app, orgId, ctx.params.renderId!);
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/render/:renderId/cancel',
      tag: 'Render',
      status: 202,
      summary: 'Cancel a render still queued or in progress: its agent stops within seconds',
      description: `A queued render ends at once; an agent rendering it is told on its next progress report and stops (within a second while its progress moves, at most a heartbeat, a third of LEASE_TTL_MS: 10 s by default). The render then reads \`{type: "error", code: "CANCELLED", message: "Cancelled"}\`. The answer is its status now. A render already done or failed is 409; another organization's is 404.`,
      body: z.object({ organizationId: z.string().optional().describe('Required with a session or bearer token') }),
      bodyExample: {},
      response: renderStatusSchema,
      example: { type: 'progress', progress: 0.42 },
    },
    async (ctx) => {
      const orgId = await requireOrg(app, ctx, suppliedOrgId(ctx));
      const renderId = ctx.params.renderId!;
      await cancellableRender(app.db, orgId, renderId);
      const outcome = await cancelSubjectTasks(app.db, app.queue, renderId);
      // Finished between the check and the cancel: nothing was stopped.
      if (outcome === 'nothing') await cancellableRender(app.db, orgId, renderId);
      app.log.info('render cancel', { renderId, organizationId: orgId, outcome });
      return renderStatus(app, orgId, renderId);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/jobs/:jobId/renders',
      tag: 'Render',
      summary:
        "A job's renders, newest first (optionally of one short): each with its short, output size, caption and brand preset, poster (thumbnailUrl) and the status GET /api/render/:renderId gives",
      description: `At most ${RENDER_LIST_LIMIT} renders, the newest. A done render's \`url\` is signed afresh on each call.`,
      query: z.object({ organizationId: z.string().optional(), shortId: z.coerce.number().int().min(0).max(MAX_SHORT_ID).optional() }),
      response: renderListSchema,
      example: {
        data: [
          {
            renderId: 'c2a81f3e-5d6b-4a79-8e10-4b3c2d1e0f98',
            shortId: 0,
            createdAt: '2026-11-25T12:05:00.000Z',
            output: { width: 1080, height: 1920 },
            captionPreset: 'HORMOZI',
            brandPreset: { id: '9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d', name: 'Channel look' },
            jumpCuts: { removeSilences: true, removeFillers: false },
            layouts: ['single', 'split'],
            shortSec: 26.5,
            type: 'progress',
            progress: 0.42,
          },
          {
            renderId: EXAMPLE_RENDER_ID,
            shortId: 0,
            createdAt: '2026-11-25T12:00:00.000Z',
            output: { width: 720, height: 1280 },
            captionPreset: 'DEFAULT',
            brandPreset: null,
            jumpCuts: { removeSilences: false, removeFillers: false },
            layouts: [],
            shortSec: 26.5,
            thumbnailUrl: `https://shorts.example.com/objects/orgs/…/render-${EXAMPLE_RENDER_ID}.jpg?expires=…&sig=…`,
            ...EXAMPLE_DONE,
          },
        ],
      },
    },
    async (ctx, { query }) => {
      const orgId = await requireOrg(app, ctx, query.organizationId);
      return { data: await listJobRenders(app, orgId, ctx.params.jobId!, query.shortId) };
    },
  );
}
