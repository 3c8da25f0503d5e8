import { z } from 'zod';
import type { Api } from './http.js';
import type { Coordinator } from '../coordinator.js';
import { notFound } from '../../../common/src/errors.js';
import { enqueueProbe } from '../probes/probes.js';
import { requireOrg } from './auth-context.js';
import { checkFetchableUrl } from '../../../common/src/net/url-rules.js';
import { parseAllowlist } from '../../../common/src/net/address-policy.js';

/** Operator-facing: ffprobe a URL on an agent (not part of the public contract). */
export function registerProbeRoutes(api: Api, app: Coordinator): void {
  api.route({
    method: 'post', path: '/api/probes', tag: 'Probes', status: 201,
    summary: 'Ask an agent to ffprobe a media URL',
    body: z.object({ url: z.string().url(), organizationId: z.string().optional() }),
    response: z.object({ id: z.string() }),
  }, async (ctx, { body }) => {
    const orgId = await requireOrg(app, ctx, body.organizationId);
    checkFetchableUrl(body.url, 'url', parseAllowlist(app.config.fetchAllowlist));
    const id = await enqueueProbe(app.db.pool, app.queue, orgId, body.url);
    return { id };
  });

  api.route({
    method: 'get', path: '/api/probes/:id', tag: 'Probes', summary: 'A probe and its result',
    query: z.object({ organizationId: z.string().optional() }),
  }, async (ctx, { query }) => {
    const orgId = await requireOrg(app, ctx, query.organizationId);
    const task = await app.queue.get(ctx.params.id!);
    if (!task || task.type !== 'probe-media' || task.organizationId !== orgId) throw notFound('Probe not found');
    return { id: task.id, state: task.state, progress: task.progress, result: task.result ?? null, error: task.lastError };
  });
}
