import { z } from 'zod';
import type { Api } from './http.js';
import { queryInt } from './http.js';
import type { Coordinator } from '../coordinator.js';
import { badRequest, notFound } from '../../../common/src/errors.js';
import { principalOf, requireOrg, suppliedOrgId } from './auth-context.js';
import { principalUser } from '../tenancy/auth.js';
import { requireOrganization } from '../tenancy/tenancy.js';
import { createJobSchema, validateJob } from '../jobs/job-input.js';
import { createJob, findJob, listJobs } from '../jobs/jobs.js';
import { apiKeyView, bearerView, listItemView } from '../jobs/job-views.js';
import { parseAllowlist } from '../../../common/src/net/address-policy.js';

const JOB_STATUSES = ['PROCESSING', 'COMPLETED', 'FAILED', 'ALL'];

export function registerJobRoutes(api: Api, app: Coordinator): void {
  api.route({
    method: 'post', path: '/api/jobs', tag: 'Jobs', status: 201,
    summary: 'Create a VideoShorts job from a YouTube video or a video URL',
    description: 'Returns 201 with both `id` and `jobId`. Credits are reserved now, charged at completion, released on failure.',
    body: createJobSchema,
    response: z.object({ id: z.string(), jobId: z.string() }),
  }, async (ctx, { body }) => {
    const orgId = await requireOrg(app, ctx, suppliedOrgId(ctx));
    const org = await requireOrganization(app.db.pool, orgId);
    const job = validateJob(body, org.plan, parseAllowlist(app.config.fetchAllowlist));
    const user = await principalUser(app.db, await principalOf(app, ctx));
    const id = await createJob(app.db, app.queue, { org, user, job, creditsPerDollar: app.config.creditsPerDollar });
    app.metrics.jobsCreated.inc();
    app.log.info('job created', { jobId: id, organizationId: orgId, source: job.youtubeVideoId ? 'youtube' : 'url' });
    return { id, jobId: id };
  });

  api.route({
    method: 'get', path: '/api/jobs', tag: 'Jobs',
    summary: 'List jobs, newest first, with title search and status filter',
    query: z.object({
      organizationId: z.string().optional(),
      limit: queryInt(10),
      offset: queryInt(0),
      query: z.string().optional(),
      status: z.string().optional(),
    }),
  }, async (ctx, { query }) => {
    const orgId = await requireOrg(app, ctx, query.organizationId);
    if (query.limit < 1 || query.limit > 100) throw badRequest('Limit must be between 1 and 100');
    if (query.offset < 0) throw badRequest('Offset must be a non-negative number');
    if (query.status && !JOB_STATUSES.includes(query.status.toUpperCase())) {
      throw badRequest(`status must be one of PROCESSING, COMPLETED, FAILED or all`);
    }
    const { rows, total } = await listJobs(app.db, orgId, { query: query.query, status: query.status, limit: query.limit, offset: query.offset });
    return { data: rows.map(listItemView), total };
  });

  api.route({
    method: 'get', path: '/api/jobs/:jobId', tag: 'Jobs',
    summary: 'A job: the simplified shape for API keys, the detailed shape (with transcription) for bearer tokens',
    query: z.object({ organizationId: z.string().optional() }),
  }, async (ctx, { query }) => {
    const orgId = await requireOrg(app, ctx, query.organizationId);
    const job = await findJob(app.db.pool, orgId, ctx.params.jobId!);
    if (!job) throw notFound('Job not found');
    const principal = await principalOf(app, ctx);
    return principal.kind === 'apiKey' ? apiKeyView(job) : bearerView(job, app.urls);
  });
}
