import { z } from 'zod';
import type { Api } from './http.js';
import type { Coordinator } from '../context.js';
import { deletedJobSchema } from '@shorts/common/api/jobs';
import { deleteJob } from '../archive/archive.js';
import { jobOrg } from './jobs-common.js';

/** DELETE /api/jobs/:jobId. */
export function registerJobDeleteRoute(api: Api, app: Coordinator): void {
  api.route(
    {
      method: 'delete',
      path: '/api/jobs/:jobId',
      tag: 'Jobs',
      summary: 'Delete a finished job and every file it produced',
      description:
        "The job disappears from the API and its source video, shorts, renders and transcript are deleted for good, giving their bytes back to the storage quota (as auto-archive does). A job still PROCESSING, or with a render queued or in progress, is refused with 409 (nothing is cancelled behind the client's back): cancel it (POST /api/jobs/{jobId}/cancel) or wait until its work has finished. Another organization's job is 404.",
      query: z.object({ organizationId: z.string().optional() }),
      response: deletedJobSchema,
    },
    async (ctx, { query }) => {
      const orgId = await jobOrg(app, ctx, query.organizationId);
      const { files, bytes } = await deleteJob(app, orgId, ctx.params.jobId!);
      return { id: ctx.params.jobId!, deleted: true as const, deletedFiles: files, freedBytes: bytes };
    },
  );
}
