import { z } from 'zod';
import type { Api } from './http.js';
import type { Coordinator } from '../context.js';
import { conflict, notFound } from '../errors.js';
import { suppliedOrgId } from './auth-context.js';
import { findJob, JOB_STATUS } from '../jobs/jobs.js';
import { cancelSubjectTasks } from '../tasks/cancel-subject.js';
import { cancelledJobSchema } from '@shorts/common/api/jobs';
import { jobOrg } from './jobs-common.js';

/** POST /api/jobs/:jobId/cancel. */
export function registerJobCancelRoute(api: Api, app: Coordinator): void {
  api.route(
    {
      method: 'post',
      path: '/api/jobs/:jobId/cancel',
      tag: 'Jobs',
      status: 202,
      summary: 'Cancel a job still PROCESSING: its agent stops, its reserved credits are released',
      description: `Work still queued ends at once; an agent running it is told on its next progress report and stops (within a second while its progress moves, at most a heartbeat, a third of LEASE_TTL_MS: 10 s by default). The job then is FAILED with the message "Cancelled" in both retrieve forms (and the job list, whose \`creditUsageStatus\` reads RELEASED), nothing charged, and its webhook (if any) sends \`job.failed\` with that message in \`data.message\`. A job already COMPLETED or FAILED is 409; another organization's job is 404.`,
      body: z.object({ organizationId: z.string().optional().describe('Required with a session or bearer token') }),
      bodyExample: {},
      response: cancelledJobSchema,
    },
    async (ctx) => {
      const orgId = await jobOrg(app, ctx, suppliedOrgId(ctx));
      const jobId = ctx.params.jobId!;
      const job = await findJob(app.db.pool, orgId, jobId);
      if (!job) throw notFound('Job not found');
      if (job.status !== JOB_STATUS.processing) throw conflict(`The job has already finished (${job.status}): there is nothing to cancel`);
      const outcome = await cancelSubjectTasks(app.db, app.queue, jobId);
      const now = await findJob(app.db.pool, orgId, jobId);
      if (outcome === 'nothing' && now?.status !== JOB_STATUS.processing)
        throw conflict(`The job has already finished (${now?.status ?? 'deleted'}): there is nothing to cancel`);
      app.log.info('job cancel', { jobId, organizationId: orgId, outcome });
      return { id: jobId, jobId, status: now?.status === JOB_STATUS.failed ? JOB_STATUS.failed : JOB_STATUS.processing };
    },
  );
}
