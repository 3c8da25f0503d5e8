import { z } from 'zod';
import type { Api } from './http.js';
import type { Coordinator } from '../context.js';
import { notFound } from '../errors.js';
import { principalOf } from './auth-context.js';
import { findJob, JOB_STATUS } from '../jobs/jobs.js';
import { apiKeyView, bearerView } from '../jobs/job-views.js';
import { jobSchema } from '@shorts/common/api/jobs';
import { EXAMPLE_JOB_ID, jobOrg } from './jobs-common.js';

/** A completed job as the bearer-token form gives it (a short path of one keyframe, for brevity). */
const EXAMPLE_JOB = {
  jobId: EXAMPLE_JOB_ID,
  title: 'Keynote',
  status: 'COMPLETED',
  progress: 100,
  createdAt: '2026-11-25T10:00:00.000Z',
  cost: 3,
  costBreakDown: { minutes: 10, perMinute: 0.3 },
  data: {
    transcription: {
      language: 'en',
      text: 'and that is why it worked',
      words: [
        { text: 'and', start: 61.5, end: 61.7 },
        { text: 'that', start: 61.7, end: 62 },
      ],
      revision: 0,
    },
    shortsRevision: 0,
    shorts: [
      {
        id: 0,
        title: 'The punchline',
        titleSource: 'transcript',
        reason: 'A clear claim with a payoff',
        startId: 210,
        endId: 262,
        startTime: 61.5,
        endTime: 88,
        text: 'and that is why it worked',
        cropFileUrl: 'https://shorts.example.com/objects/orgs/…/short-0.mp4?expires=…&sig=…',
        reframe: {
          sourceWidth: 1920,
          sourceHeight: 1080,
          keyframes: [{ time: 61.5, x: 656, y: 0, width: 608, height: 1080 }],
          segments: [{ start: 61.5, end: 88, layout: 'single', tracks: [1] }],
        },
      },
    ],
  },
};

/** GET /api/jobs/:jobId. */
export function registerJobRetrieveRoute(api: Api, app: Coordinator): void {
  api.route(
    {
      method: 'get',
      path: '/api/jobs/:jobId',
      tag: 'Jobs',
      summary: 'A job: the simplified shape for API keys, the detailed shape (with transcription) for bearer tokens',
      description:
        'Each short of a completed job carries `reframe`, its crop path: keyframes (time on the source clock, window in source pixels, linear between keyframes) and segments (`single`, `split` with `panels`, `fit`). While PROCESSING, `stage` names what the job is doing: the stage of its progress value, or why it waits when it has waited past `WAITING_NOTICE_MS` with no connected agent able to run it (for example "waiting for an analysis agent").',
      query: z.object({ organizationId: z.string().optional() }),
      response: jobSchema,
      example: EXAMPLE_JOB,
    },
    async (ctx, { query }) => {
      const orgId = await jobOrg(app, ctx, query.organizationId);
      const job = await findJob(app.db.pool, orgId, ctx.params.jobId!);
      if (!job) throw notFound('Job not found');
      const principal = await principalOf(app, ctx);
      // Work no connected agent can take says so (docs/api.md): "waiting for an analysis agent".
      const waiting = job.status === JOB_STATUS.processing ? await app.queue.waitingReason(job.id) : undefined;
      return principal.kind === 'apiKey' ? apiKeyView(job, waiting) : await bearerView(job, app.urls, waiting);
    },
  );
}
