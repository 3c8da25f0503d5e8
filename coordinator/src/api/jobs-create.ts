import { z } from 'zod';
import type { Api, ApiContext } from './http.js';
import type { Coordinator } from '../context.js';
import { principalOf, suppliedOrgId } from './auth-context.js';
import { principalUser } from '../tenancy/auth.js';
import { requireOrganization } from '../tenancy/tenancy.js';
import { createJobSchema, validateJob, type CreateJobBody } from '../jobs/job-input.js';
import { createJob, sourceOfJob, type StoredSource } from '../jobs/jobs.js';
import { parseAllowlist } from '@shorts/common/net/address-policy';
import { createdJobSchema } from '@shorts/common/api/jobs';
import { retryRequest } from '../jobs/retry-job.js';
import { EXAMPLE_JOB_ID, EXAMPLE_ORG_ID, jobOrg } from './jobs-common.js';

/** POST /api/jobs and its retry form, which start a job the same way. */
export function registerJobCreateRoutes(api: Api, app: Coordinator): void {
  api.route(
    {
      method: 'post',
      path: '/api/jobs',
      tag: 'Jobs',
      status: 201,
      summary: 'Create a VideoShorts job from a YouTube video or a video URL',
      description:
        'Returns 201 with both `id` and `jobId`. Credits are reserved now, charged at completion, released on failure. Besides `youtubeVideoId` and `fileUrl`, `sourceJobId` names a completed job whose stored source video is analysed again (for example with adjusted `predefinedShorts`), with no new download.',
      body: createJobSchema,
      response: createdJobSchema,
      example: { id: EXAMPLE_JOB_ID, jobId: EXAMPLE_JOB_ID },
      idempotent: (ctx) => jobOrg(app, ctx, suppliedOrgId(ctx)),
    },
    async (ctx, { body }) => {
      const orgId = await jobOrg(app, ctx, suppliedOrgId(ctx));
      const stored = body.sourceJobId ? await sourceOfJob(app.db.pool, orgId, body.sourceJobId) : undefined;
      return startJob(app, ctx, orgId, body, stored);
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/jobs/:jobId/retry',
      tag: 'Jobs',
      status: 201,
      summary: 'Start a new job from the same source and options as a finished one',
      description:
        'The same YouTube id or file URL (fetched again, under the same URL rules as POST /api/jobs), or for a completed upload its stored video (no new upload); the same title, options and webhook. Credits are reserved as for any new job. 409 while the job is PROCESSING; 400 for a failed upload, whose video is not kept (upload it again). ',
      body: z.object({ organizationId: z.string().optional().describe('Required with a session or bearer token') }),
      bodyExample: { organizationId: EXAMPLE_ORG_ID },
      idempotent: (ctx) => jobOrg(app, ctx, suppliedOrgId(ctx)),
      response: createdJobSchema.meta({
        example: { id: '0b5c8e0e-6f0a-4d7e-9a51-2f0d8c3b9e11', jobId: '0b5c8e0e-6f0a-4d7e-9a51-2f0d8c3b9e11' },
      }),
    },
    async (ctx) => {
      const orgId = await jobOrg(app, ctx, suppliedOrgId(ctx));
      const { body, stored } = await retryRequest(app.db.pool, orgId, ctx.params.jobId!);
      return startJob(app, ctx, orgId, body, stored);
    },
  );
}

async function startJob(app: Coordinator, ctx: ApiContext, orgId: string, body: CreateJobBody, stored: StoredSource | undefined) {
  const organization = await requireOrganization(app.db.pool, orgId);
  const job = validateJob(body, organization.plan, parseAllowlist(app.config.fetchAllowlist));
  const principal = await principalOf(app, ctx);
  const user = await principalUser(app.db, principal);
  // Jobs started from a studio session are the web application's (contract 2.3 `source`).
  const source = principal.kind === 'user' && principal.via === 'session' ? 'WEB_APP' : 'API';
  const id = await createJob(app.db, app.queue, {
    org: organization,
    user,
    job,
    creditsPerDollar: app.config.creditsPerDollar,
    source,
    stored,
  });
  app.metrics.jobsCreated.inc();
  app.log.info('job created', { jobId: id, organizationId: orgId, source: stored ? 'stored' : job.youtubeVideoId ? 'youtube' : 'url' });
  return { id, jobId: id };
}
