import { z } from 'zod';
import { pageParams, pageQueryParam, type Api, type ApiContext } from './http.js';
import type { Coordinator } from '../coordinator.js';
import { AppError, badRequest, notFound } from '../../../common/src/errors.js';
import { principalOf, requireOrg, suppliedOrgId } from './auth-context.js';
import { DEFAULT_ORG_MESSAGES, principalUser, type OrganizationMessages } from '../tenancy/auth.js';
import { requireOrganization } from '../tenancy/tenancy.js';
import { createJobSchema, validateJob } from '../jobs/job-input.js';
import { createJob, findJob, JOB_STATUS, listJobs, sourceOfJob } from '../jobs/jobs.js';
import { apiKeyView, bearerView, listItemView } from '../jobs/job-views.js';
import { parseAllowlist } from '../../../common/src/net/address-policy.js';
import { reframeSchema } from '../../../common/src/reframe/schema.js';

const JOB_STATUSES: string[] = [...Object.values(JOB_STATUS), 'ALL'];

const reframeField = reframeSchema.nullable()
  .describe('The crop path the cropped video follows and renders reuse (null for a short analysed without one)');

// Beyond the contract, in the retrieve forms and the list item alike.
const STAGE_DESCRIPTION = 'Only while PROCESSING: why the job waits, when no connected agent has been able to run its work for WAITING_NOTICE_MS (e.g. "waiting for an analysis agent"); otherwise the contract\'s name for its progress value ("initiating services", "downloading video", "transcribing", "generating shorts", "active speaker detection")';
const stageField = z.string().optional().describe(STAGE_DESCRIPTION);

// The two retrieve forms (contract 2.3 and 2.4), for the OpenAPI document.
const apiKeyJobSchema = z.object({
  id: z.string(), title: z.string().nullable(), status: z.string(), source: z.string().nullable(), progress: z.number(),
  cost: z.number().nullable(), costBreakDown: z.record(z.string(), z.unknown()).nullable(), message: z.string().optional(),
  stage: stageField,
  data: z.object({
    shorts: z.array(z.object({
      id: z.string(), content: z.string(), text: z.string(), startTime: z.number(), endTime: z.number(), reframe: reframeField,
    })),
  }).optional().describe('Only when COMPLETED'),
}).describe('API-key form (contract 2.3)');

const bearerJobSchema = z.object({
  jobId: z.string(), title: z.string().nullable(), status: z.string(), progress: z.number(), createdAt: z.string(),
  cost: z.number().optional(), costBreakDown: z.record(z.string(), z.unknown()).optional(), message: z.string().optional(),
  stage: stageField,
  data: z.object({
    transcription: z.record(z.string(), z.unknown()).nullable(),
    shorts: z.array(z.object({
      id: z.number(), title: z.string(), reason: z.string().optional(), startId: z.number().nullable(), endId: z.number().nullable(),
      startTime: z.number(), endTime: z.number(), text: z.string(), cropFileUrl: z.string().nullable(), reframe: reframeField,
    })),
  }).optional().describe('Only when COMPLETED'),
}).describe('Bearer-token form (contract 2.4)');

/** Contract section 7 words the jobs routes' 403 `Not allowed`, a key bound to another organization included. */
export const JOBS_ORG_MESSAGES: OrganizationMessages = {
  ...DEFAULT_ORG_MESSAGES,
  mismatch: new AppError(403, 'Not allowed', 'Organization ID mismatch: the API key is bound to a different organization'),
};

export function registerJobRoutes(api: Api, app: Coordinator): void {
  const org = (ctx: ApiContext, supplied: unknown) => requireOrg(app, ctx, supplied, JOBS_ORG_MESSAGES);

  api.route({
    method: 'post', path: '/api/jobs', tag: 'Jobs', status: 201,
    summary: 'Create a VideoShorts job from a YouTube video or a video URL',
    description: 'Returns 201 with both `id` and `jobId`. Credits are reserved now, charged at completion, released on failure. Besides `youtubeVideoId` and `fileUrl`, `sourceJobId` names a completed job whose stored source video is analysed again (for example with adjusted `predefinedShorts`), with no new download.',
    body: createJobSchema,
    response: z.object({ id: z.string(), jobId: z.string() }),
  }, async (ctx, { body }) => {
    const orgId = await org(ctx, suppliedOrgId(ctx));
    const organization = await requireOrganization(app.db.pool, orgId);
    const job = validateJob(body, organization.plan, parseAllowlist(app.config.fetchAllowlist));
    const principal = await principalOf(app, ctx);
    const user = await principalUser(app.db, principal);
    const stored = body.sourceJobId ? await sourceOfJob(app.db.pool, orgId, body.sourceJobId) : undefined;
    // Jobs started from a studio session are the web application's (contract 2.3 `source`).
    const source = principal.kind === 'user' && principal.via === 'session' ? 'WEB_APP' : 'API';
    const id = await createJob(app.db, app.queue, { org: organization, user, job, creditsPerDollar: app.config.creditsPerDollar, source, stored });
    app.metrics.jobsCreated.inc();
    app.log.info('job created', { jobId: id, organizationId: orgId, source: stored ? 'stored' : job.youtubeVideoId ? 'youtube' : 'url' });
    return { id, jobId: id };
  });

  api.route({
    method: 'get', path: '/api/jobs', tag: 'Jobs',
    summary: 'List jobs, newest first, with title search and status filter',
    description: '`limit` 1-100 (default 10), `offset` >= 0 (default 0); `query` searches titles case-insensitively; `status` PROCESSING, COMPLETED, FAILED or all (any case). `total` counts matching jobs before paging. Besides the contract\'s fields, an item carries `stage`: ' + STAGE_DESCRIPTION + '.',
    query: z.object({
      organizationId: z.string().optional(),
      limit: pageQueryParam,
      offset: pageQueryParam,
      query: z.string().optional(),
      status: z.string().optional(),
    }),
  }, async (ctx, { query }) => {
    const orgId = await org(ctx, query.organizationId);
    const { limit, offset } = pageParams(query, 10);
    if (query.status && !JOB_STATUSES.includes(query.status.toUpperCase())) {
      throw badRequest(`status must be one of PROCESSING, COMPLETED, FAILED or all`);
    }
    const { rows, total } = await listJobs(app.db, orgId, { query: query.query, status: query.status, limit, offset });
    // Only work still in progress can be waiting: one look at the queue for the page's PROCESSING jobs.
    const waiting = await app.queue.waitingReasons(rows.filter((job) => job.status === JOB_STATUS.processing).map((job) => job.id));
    return { data: rows.map((job) => listItemView(job, waiting.get(job.id))), total };
  });

  api.route({
    method: 'get', path: '/api/jobs/:jobId', tag: 'Jobs',
    summary: 'A job: the simplified shape for API keys, the detailed shape (with transcription) for bearer tokens',
    description: 'Each short of a completed job carries `reframe`, its crop path: keyframes (time on the source clock, window in source pixels, linear between keyframes) and segments (`single`, `split` with `panels`, `fit`). While PROCESSING, `stage` names what the job is doing: the stage of its progress value, or why it waits when it has waited past `WAITING_NOTICE_MS` with no connected agent able to run it (for example "waiting for an analysis agent").',
    query: z.object({ organizationId: z.string().optional() }),
    response: z.union([apiKeyJobSchema, bearerJobSchema]),
  }, async (ctx, { query }) => {
    const orgId = await org(ctx, query.organizationId);
    const job = await findJob(app.db.pool, orgId, ctx.params.jobId!);
    if (!job) throw notFound('Job not found');
    const principal = await principalOf(app, ctx);
    // Work no connected agent can take says so (docs/api.md): "waiting for an analysis agent".
    const waiting = job.status === JOB_STATUS.processing ? await app.queue.waitingReason(job.id) : undefined;
    return principal.kind === 'apiKey' ? apiKeyView(job, waiting) : await bearerView(job, app.urls, waiting);
  });
}
