import { z } from 'zod';
import { pageParams, pageQueryParam, type Api } from './http.js';
import type { Coordinator } from '../context.js';
import { badRequest } from '../errors.js';
import { JOB_STATUS, listJobs } from '../jobs/jobs.js';
import { listItemView } from '../jobs/job-views.js';
import { jobListSchema, STAGE_DESCRIPTION } from '@shorts/common/api/jobs';
import { jobOrg } from './jobs-common.js';

const JOB_STATUSES: string[] = [...Object.values(JOB_STATUS), 'ALL'];

/** GET /api/jobs. */
export function registerJobListRoute(api: Api, app: Coordinator): void {
  api.route(
    {
      method: 'get',
      path: '/api/jobs',
      tag: 'Jobs',
      summary: 'List jobs, newest first, with title search and status filter',
      description:
        "`limit` 1-100 (default 10), `offset` >= 0 (default 0); `query` searches titles case-insensitively; `status` PROCESSING, COMPLETED, FAILED or all (any case). `total` counts matching jobs before paging. Besides the contract's fields, an item carries `stage`: " +
        STAGE_DESCRIPTION +
        '.',
      query: z.object({
        organizationId: z.string().optional(),
        limit: pageQueryParam,
        offset: pageQueryParam,
        query: z.string().optional(),
        status: z
          .string()
          .optional()
          .meta({ enum: ['PROCESSING', 'COMPLETED', 'FAILED', 'all'], description: 'Any case' }),
      }),
      response: jobListSchema,
    },
    async (ctx, { query }) => {
      const orgId = await jobOrg(app, ctx, query.organizationId);
      const { limit, offset } = pageParams(query, 10);
      if (query.status && !JOB_STATUSES.includes(query.status.toUpperCase())) {
        throw badRequest(`status must be one of PROCESSING, COMPLETED, FAILED or all`);
      }
      const { rows, total } = await listJobs(app.db, orgId, { query: query.query, status: query.status, limit, offset });
      // Only work still in progress can be waiting: one look at the queue for the page's PROCESSING jobs.
      const waiting = await app.queue.waitingReasons(rows.filter((job) => job.status === JOB_STATUS.processing).map((job) => job.id));
      return { data: rows.map((job) => listItemView(job, waiting.get(job.id))), total };
    },
  );
}
