import { z } from 'zod';
import type { Api } from './http.js';
import type { Coordinator } from '../context.js';
import { notFound } from '../errors.js';
import { enqueueProbe } from '../probes/probes.js';
import { requireOrg } from './auth-context.js';
import { checkFetchableUrl } from '@shorts/common/net/url-rules';
import { parseAllowlist } from '@shorts/common/net/address-policy';
import { TASK_STATES } from '@shorts/common/tasks';
import { probeMediaResultSchema, type ProbeMediaResult } from '@shorts/common/tasks/probe-media';

/** GET /api/probes/:id: the probe task as it stands. */
const probeSchema = z.object({
  id: z.string(),
  state: z.enum(TASK_STATES),
  progress: z.number().describe('0 to 1'),
  result: probeMediaResultSchema.nullable().describe('Once the probe has completed'),
  error: z.string().nullable().describe('Why the last attempt failed'),
});

// A completed probe's result passed its contract when the agent reported it (tasks/typed-outcome.ts).
const isProbeResult = (result: unknown): result is ProbeMediaResult => probeMediaResultSchema.safeParse(result).success;

/** Operator-facing: ffprobe a URL on an agent (not part of the public contract). */
export function registerProbeRoutes(api: Api, app: Coordinator): void {
  api.route(
    {
      method: 'post',
      path: '/api/probes',
      tag: 'Probes',
      status: 201,
      summary: 'Ask an agent to ffprobe a media URL',
      body: z.object({ url: z.string().url(), organizationId: z.string().optional() }),
      bodyExample: { url: 'https://media.example.com/talk.mp4' },
      response: z.object({ id: z.string() }),
      example: { id: '4a2e9c71-0b3d-4f5e-a6c8-7d9e1f2a3b4c' },
      idempotent: (ctx) => requireOrg(app, ctx, (ctx.state.body as { organizationId?: unknown } | undefined)?.organizationId),
    },
    async (ctx, { body }) => {
      const orgId = await requireOrg(app, ctx, body.organizationId);
      checkFetchableUrl(body.url, 'url', parseAllowlist(app.config.fetchAllowlist));
      const id = await enqueueProbe(app.db.pool, app.queue, orgId, body.url);
      return { id };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/probes/:id',
      tag: 'Probes',
      summary: 'A probe and its result',
      query: z.object({ organizationId: z.string().optional() }),
      response: probeSchema,
      example: {
        id: '4a2e9c71-0b3d-4f5e-a6c8-7d9e1f2a3b4c',
        state: 'completed',
        progress: 1,
        error: null,
        result: {
          formatName: 'mov,mp4,m4a,3gp,3g2,mj2',
          durationSec: 612.4,
          streams: [
            { index: 0, codecType: 'video', codecName: 'h264', width: 1920, height: 1080 },
            { index: 1, codecType: 'audio', codecName: 'aac' },
          ],
        },
      },
    },
    async (ctx, { query }) => {
      const orgId = await requireOrg(app, ctx, query.organizationId);
      const task = await app.queue.get(ctx.params.id!);
      if (!task || task.type !== 'probe-media' || task.organizationId !== orgId) throw notFound('Probe not found');
      return {
        id: task.id,
        state: task.state,
        progress: task.progress,
        result: isProbeResult(task.result) ? task.result : null,
        error: task.lastError,
      };
    },
  );
}
