import { z } from 'zod';
import { pageParams, pageQueryParam, type Api, type ApiContext } from './http.js';
import type { Coordinator } from '../context.js';
import { AppError, badRequest, conflict, notFound } from '../errors.js';
import { principalOf, requireOrg, suppliedOrgId } from './auth-context.js';
import { DEFAULT_ORG_MESSAGES, principalUser, type OrganizationMessages } from '../tenancy/auth.js';
import { requireOrganization } from '../tenancy/tenancy.js';
import { createJobSchema, validateJob, type CreateJobBody } from '../jobs/job-input.js';
import { createJob, findJob, JOB_STATUS, listJobs, sourceOfJob, type StoredSource } from '../jobs/jobs.js';
import { cancelSubjectTasks } from '../tasks/cancel-subject.js';
import { apiKeyView, bearerView, listItemView } from '../jobs/job-views.js';
import { parseAllowlist } from '@shorts/common/net/address-policy';
import { framingBodySchema, setFraming } from '../jobs/framing-edits.js';
import {
  cancelledJobSchema,
  createdJobSchema,
  deletedJobSchema,
  jobListSchema,
  jobSchema,
  shortEditResponseSchema,
  STAGE_DESCRIPTION,
  transcriptEditResponseSchema,
} from '@shorts/common/api/jobs';
import { editTranscript, transcriptEditsBodySchema } from '../jobs/transcript-edits.js';
import {
  addShort,
  addShortBodySchema,
  removeShort,
  removeShortQuerySchema,
  updateShort,
  updateShortBodySchema,
} from '../jobs/short-edits.js';
import { retryRequest } from '../jobs/retry-job.js';
import { deleteJob } from '../archive/archive.js';

const JOB_STATUSES: string[] = [...Object.values(JOB_STATUS), 'ALL'];
const EXAMPLE_JOB_ID = '0b5c8e0e-6f0a-4d7e-9a51-2f0d8c3b9e11';
const EXAMPLE_ORG_ID = '5d1c2b7e-3a44-4f0e-8f53-1f7a9e2c6b10';
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

const SHORT_EDIT_RULES =
  "Nothing is downloaded, transcribed or charged again. `startTime`/`endTime`: 0 <= start < end <= the source's duration, lasting at least 1 second and at most the plan's predefined-short limit (90 s on Free and Starter, 300 s on Pro and Business). The short's `text` follows its range. Reframing is planned again from the stored detections when the range lies inside what detection analysed for the short; outside it the short keeps the centre crop (`reframe` null, `reframeStale` true) and no detection pass runs. `revision` must be `data.shortsRevision` (bearer-token form): a stale one is 409, so concurrent editors never lose an edit silently. Another organization's job is 404.";

/** Contract section 7 words the jobs routes' 403 `Not allowed`, a key bound to another organization included. */
export const JOBS_ORG_MESSAGES: OrganizationMessages = {
  ...DEFAULT_ORG_MESSAGES,
  mismatch: new AppError(403, 'Not allowed', 'Organization ID mismatch: the API key is bound to a different organization'),
};

export function registerJobRoutes(api: Api, app: Coordinator): void {
  const org = (ctx: ApiContext, supplied: unknown) => requireOrg(app, ctx, supplied, JOBS_ORG_MESSAGES);

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
      idempotent: (ctx) => org(ctx, suppliedOrgId(ctx)),
    },
    async (ctx, { body }) => {
      const orgId = await org(ctx, suppliedOrgId(ctx));
      const stored = body.sourceJobId ? await sourceOfJob(app.db.pool, orgId, body.sourceJobId) : undefined;
      return startJob(ctx, orgId, body, stored);
    },
  );

  async function startJob(ctx: ApiContext, orgId: string, body: CreateJobBody, stored: StoredSource | undefined) {
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
      idempotent: (ctx) => org(ctx, suppliedOrgId(ctx)),
      response: createdJobSchema.meta({
        example: { id: '0b5c8e0e-6f0a-4d7e-9a51-2f0d8c3b9e11', jobId: '0b5c8e0e-6f0a-4d7e-9a51-2f0d8c3b9e11' },
      }),
    },
    async (ctx) => {
      const orgId = await org(ctx, suppliedOrgId(ctx));
      const { body, stored } = await retryRequest(app.db.pool, orgId, ctx.params.jobId!);
      return startJob(ctx, orgId, body, stored);
    },
  );

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
      const orgId = await org(ctx, suppliedOrgId(ctx));
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
      const orgId = await org(ctx, query.organizationId);
      const { files, bytes } = await deleteJob(app, orgId, ctx.params.jobId!);
      return { id: ctx.params.jobId!, deleted: true as const, deletedFiles: files, freedBytes: bytes };
    },
  );

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
      const orgId = await org(ctx, query.organizationId);
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
      const orgId = await org(ctx, query.organizationId);
      const job = await findJob(app.db.pool, orgId, ctx.params.jobId!);
      if (!job) throw notFound('Job not found');
      const principal = await principalOf(app, ctx);
      // Work no connected agent can take says so (docs/api.md): "waiting for an analysis agent".
      const waiting = job.status === JOB_STATUS.processing ? await app.queue.waitingReason(job.id) : undefined;
      return principal.kind === 'apiKey' ? apiKeyView(job, waiting) : await bearerView(job, app.urls, waiting);
    },
  );

  api.route(
    {
      method: 'patch',
      path: '/api/jobs/:jobId/transcription',
      tag: 'Jobs',
      summary: "Correct words of a completed job's transcript",
      description:
        "Fix, join, split, delete or insert words. A fixed word keeps its timing; joined words span from the first's start to the last's end; a split word's time is shared among its parts by their length; an inserted word must fit the pause it goes in (how an undo restores words exactly). The shorts' `text` (and an AI short's `startId`/`endId`) follow, and every render requested afterwards captions the corrected words. `revision` must be the transcript's current revision (`data.transcription.revision` in the bearer-token form): a stale one is refused with 409, so concurrent editors never lose an edit silently.",
      query: z.object({ organizationId: z.string().optional() }),
      body: transcriptEditsBodySchema,
      response: transcriptEditResponseSchema,
      bodyExample: {
        revision: 0,
        edits: [
          { op: 'replace', index: 1, text: 'fox' },
          { op: 'split', index: 4, texts: ['high', 'five'] },
        ],
      },
      example: {
        revision: 1,
        text: 'the fox jumps high five',
        words: [
          { text: 'the', start: 0.5, end: 0.7 },
          { text: 'fox', start: 0.7, end: 1.1 },
          { text: 'jumps', start: 1.1, end: 1.5 },
          { text: 'high', start: 2.5, end: 2.9 },
          { text: 'five', start: 2.9, end: 3.3 },
        ],
      },
    },
    async (ctx, { query, body }) => {
      const orgId = await org(ctx, query.organizationId ?? body.organizationId);
      return editTranscript(app.db, orgId, ctx.params.jobId!, body);
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/jobs/:jobId/shorts',
      tag: 'Jobs',
      status: 201,
      summary: 'Add a short to a completed job',
      description:
        'The new short takes the next id (ids of removed shorts are never reused). It is reframed from the detections of any short whose analysed range covers it, else centre-cropped. ' +
        SHORT_EDIT_RULES,
      body: addShortBodySchema.meta({ example: { revision: 0, title: 'The punchline', startTime: 61.5, endTime: 88 } }),
      response: shortEditResponseSchema,
      idempotent: (ctx) => org(ctx, (ctx.state.body as { organizationId?: unknown } | undefined)?.organizationId),
    },
    async (ctx, { body }) => {
      const orgId = await org(ctx, body.organizationId);
      return addShort(app.db, orgId, ctx.params.jobId!, body);
    },
  );

  api.route(
    {
      method: 'patch',
      path: '/api/jobs/:jobId/shorts/:shortId',
      tag: 'Jobs',
      summary: 'Trim or rename a short of a completed job in place',
      description:
        'Any of `title`, `startTime`, `endTime`; the others are kept. Renders requested afterwards use the new range, words and path. ' +
        SHORT_EDIT_RULES,
      query: z.object({ organizationId: z.string().optional() }),
      body: updateShortBodySchema.meta({ example: { revision: 3, startTime: 12.5, endTime: 40 } }),
      response: shortEditResponseSchema,
    },
    async (ctx, { query, body }) => {
      const orgId = await org(ctx, query.organizationId ?? body.organizationId);
      return updateShort(app.db, orgId, ctx.params.jobId!, ctx.params.shortId!, body);
    },
  );

  api.route(
    {
      method: 'put',
      path: '/api/jobs/:jobId/shorts/:shortId/framing',
      tag: 'Jobs',
      summary: "Set a short's framing by hand",
      description:
        "Replaces the spans framed by hand (`overrides`, in order: of two overlapping, the later wins): `window` holds the crop window still (its centre and height; its shape is the render's), `layout` forces single, split, fit or stack, framed as the camera would, `face` makes the window follow a face track. The path is planned again around them (from the stored detections where the short has them, else from its stored path or the centre crop), served in the short's `reframe` (with `reframe.overrides`) in both retrieve forms, and followed by every later render, at any size. A trim keeps them, clipped to the new range. An empty list gives the camera its own path back. Nothing runs and nothing is charged. A span outside the short, a window outside the source, an unknown layout, or a face detection did not see in the span is 400 and changes nothing. `revision` as for the other short edits: a stale one is 409. Another organization's job is 404.",
      query: z.object({ organizationId: z.string().optional() }),
      body: framingBodySchema.meta({
        example: {
          revision: 4,
          overrides: [
            { start: 12, end: 15.5, kind: 'window', window: { x: 120, y: 0, width: 406, height: 720 } },
            { start: 20, end: 24, kind: 'layout', layout: 'fit' },
            { start: 30, end: 36, kind: 'face', trackId: 2 },
          ],
        },
      }),
      response: shortEditResponseSchema,
    },
    async (ctx, { query, body }) => {
      const orgId = await org(ctx, query.organizationId ?? body.organizationId);
      return setFraming(app.db, orgId, ctx.params.jobId!, ctx.params.shortId!, body);
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/api/jobs/:jobId/shorts/:shortId',
      tag: 'Jobs',
      summary: 'Remove a short from a completed job',
      description:
        "The short disappears from the job (and as a render target, 404); the other shorts keep their ids and paths, and renders already made stay. `revision` (query) as for the other short edits: a stale one is 409. Another organization's job is 404.",
      query: removeShortQuerySchema,
      response: shortEditResponseSchema,
    },
    async (ctx, { query }) => {
      const orgId = await org(ctx, query.organizationId);
      return removeShort(app.db, orgId, ctx.params.jobId!, ctx.params.shortId!, query.revision);
    },
  );
}
