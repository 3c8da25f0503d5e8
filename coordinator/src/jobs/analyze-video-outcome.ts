import type { Coordinator } from '../context.js';
import type { Queryable } from '../db/db.js';
import { AppError, badRequest } from '../errors.js';
import { ANALYZE_STAGES, analyzeVideoOutputs, isAnalyzeStage, type AnalyzeVideoResult } from '@shorts/common/tasks/analyze-video';
import type { AnalyzeVideoLease, AnalyzeVideoPayload } from '@shorts/common/tasks/analyze-video';
import { shortPastEnd } from '@shorts/common/options/predefined-shorts';
import type { TaskFailureCode } from '@shorts/common/tasks/failure-codes';
import type { ReframeQuality } from '@shorts/common/reframe/types';
import { chargeCredits, releaseCredits, reserveEstimate } from '../credits/credits.js';
import { deleteFileRows, insertFiles, type NewFile } from '../files/files.js';
import { deletePrefix } from '../storage/object-store.js';
import { taskObjectKey, taskObjectPrefix } from '../tasks/task-queue.js';
import type { TypedOutcomeHandler, TypedTaskRow } from '../tasks/typed-outcome.js';
import type { Plan } from '../tenancy/plans.js';
import { enqueueWebhook } from '../webhooks/webhooks.js';
import { bandOf, bearerView } from './job-views.js';
import { checkStorageRoom, JOB_COLUMNS, JOB_STATUS, type JobRow, type StoredShort } from './jobs.js';
import { priceJob } from './pricing.js';
import { deleteChildrenObjects } from '../files/task-objects.js';
import { finalPartPayload, rangeChildren, rangesFromSec, rangesProgressed } from './analysis-ranges.js';
import { joinReframedShorts, shortChildren, shortsProgressed, verifyAnalysisObjects } from './analysis-shorts.js';
import { freeSlots } from '../tasks/liveness.js';

type AnalysisApp = Pick<Coordinator, 'config' | 'store' | 'urls' | 'boss' | 'metrics' | 'db'>;
type AnalysisTask = TypedTaskRow<'analyze-video'>;

async function lockJob(c: Queryable, id: string): Promise<JobRow | undefined> {
  return (await c.query<JobRow>(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1 FOR UPDATE`, [id])).rows[0];
}

/** What the job asked for, as resolved when it was accepted: the analysis task's own payload
 *  (the job's options keep the same for the API, read here never). */
function askedFor(task: AnalysisTask) {
  const { predefinedShorts, picking } = task.payload;
  return { predefinedShorts, range: picking?.range ?? null };
}

/** Checks what the agent produced against what the client asked, now that the duration is known. */
function checkShorts(job: JobRow, task: AnalysisTask, result: AnalyzeVideoResult): void {
  const { predefinedShorts: asked, range } = askedFor(task);
  const pastEnd = shortPastEnd(asked, result.durationSec);
  if (pastEnd) throw badRequest(pastEnd);
  // Jobs made before picking options, and studio uploads, store no clipLength: the platform's 90 s.
  const longest = job.options?.clipLength?.max ?? 90;
  for (const s of result.shorts) {
    if (!(s.endTime > s.startTime) || s.startTime < 0 || s.endTime > result.durationSec + 0.05)
      throw new AppError(500, 'bad_result', 'agent returned a short outside the video');
    if (!asked && s.endTime - s.startTime > longest + 0.05)
      throw new AppError(500, 'bad_result', `agent returned an automatic short over ${longest} seconds`);
    if (!asked && range && (s.startTime < range.start - 0.05 || s.endTime > range.end + 0.05))
      throw new AppError(500, 'bad_result', 'agent returned a short outside the range asked for');
  }
}

/** The job's price for a video of this length and size, on its organization's plan. */
function priceFor(app: AnalysisApp, plan: Plan, job: JobRow, task: AnalysisTask, durationSec: number, downloadBytes: number) {
  const { predefinedShorts, range } = askedFor(task);
  return priceJob(
    { plan, durationSec, fromYoutube: !!job.youtubeVideoId, downloadBytes, predefinedShorts, range },
    app.config.creditsPerDollar,
  );
}

/** A video in the organization's storage (a studio upload, or an earlier job's source). */
function storedSource(task: AnalysisTask) {
  const { source } = task.payload;
  return source.kind === 'object' ? source : undefined;
}

/**
 * As soon as the agent knows the video's length the job's reservation grows to its price, so a
 * job the credits cannot pay for fails now, before transcription, and jobs running side by side
 * cannot promise the same credits twice. Idempotent: a re-leased task reports the same facts.
 */
async function reserveForVideo(app: AnalysisApp, c: Queryable, task: AnalysisTask, durationSec: number, downloadBytes: number) {
  const job = await lockJob(c, task.subjectId!);
  if (!job || job.status !== JOB_STATUS.processing) return;
  const org = (
    await c.query<{ plan: Plan; credits: number; reservedCredits: number; storageUsedBytes: number }>(
      `SELECT plan, credits, reserved_credits AS "reservedCredits", storage_used_bytes::float8 AS "storageUsedBytes"
         FROM organizations WHERE id = $1 FOR UPDATE`,
      [job.organizationId],
    )
  ).rows[0];
  // The job keeps its own copy of the source; a studio upload it consumes gives its bytes back.
  const upload = storedSource(task);
  checkStorageRoom(org.plan, org.storageUsedBytes, upload?.consume ? 0 : downloadBytes);
  const price = priceFor(app, org.plan, job, task, durationSec, downloadBytes);
  if (!(await reserveEstimate(c, job.organizationId, job.id, Number(job.reservedCredits), price.cost))) {
    const available = Number(org.credits) - Number(org.reservedCredits) + Number(job.reservedCredits);
    throw new AppError(
      403,
      'noEnoughCredit',
      `Not enough credits for this video: ${(durationSec / 60).toFixed(1)} minutes cost ${price.cost.toFixed(2)} credits, ${Math.max(0, available).toFixed(2)} available`,
    );
  }
}

/** Each stored short's path quality, once the job's completion has committed (one analysis task
 *  completes a job, once). */
async function observeQuality(app: AnalysisApp, jobId: string): Promise<void> {
  const rows = await app.db.query<{ quality: ReframeQuality | null }>(
    `SELECT s->'reframe'->'quality' AS quality FROM jobs, jsonb_array_elements(jobs.data->'shorts') s
        WHERE jobs.id = $1 AND jobs.status = 'COMPLETED'`,
    [jobId],
  );
  for (const { quality } of rows) {
    if (!quality) continue;
    app.metrics.speakerOnScreen.observe(quality.speakerOnScreenShare);
    app.metrics.faceInWindow.observe(quality.faceInWindowShare);
  }
}

/** A video in the organization's storage reaches the agent by a signed URL made at lease time. */
async function analysisLease(app: AnalysisApp, task: AnalysisTask, payload: AnalyzeVideoPayload): Promise<AnalyzeVideoLease> {
  const { source, stitched, ...rest } = payload;
  const sign = async (key: string) => (await app.urls.sign(key, 'GET', 6 * 3600)).url;
  const leased = source.kind === 'object' ? { ...rest, source: { ...source, url: await sign(source.objectKey) } } : { ...rest, source };
  // With free slots in the farm the shorts' reframing is left to children (./analysis-shorts.ts).
  const reframeSlots = (await freeSlots(app, 'reframe-short', task.id)).all;
  // A ranged analysis's final part reads the source its first part stored.
  if (stitched) {
    const audioUrl = stitched.audioKey ? await sign(stitched.audioKey) : undefined;
    return {
      ...leased,
      reframeSlots,
      stitched: { ...stitched, sourceUrl: await sign(stitched.source.objectKey), ...(audioUrl ? { audioUrl } : {}) },
    };
  }
  return { ...leased, rangesFromSec: rangesFromSec(app.config), reframeSlots };
}

/** The files a completed analysis leaves in the organization's storage: the source and each crop clip. */
function analysisFiles(job: JobRow, result: AnalyzeVideoResult, stored: Map<string, number>): NewFile[] {
  const files: NewFile[] = [
    {
      organizationId: job.organizationId,
      jobId: job.id,
      name: result.source.name,
      type: 'video',
      contentType: result.source.contentType,
      sizeBytes: stored.get(result.source.objectKey)!,
      lengthSec: result.durationSec,
      objectKey: result.source.objectKey,
      thumbnailKey: result.source.thumbnailKey ?? null,
      tags: ['source'],
    },
  ];
  result.shorts.forEach((s, i) => {
    if (s.crop) {
      files.push({
        organizationId: job.organizationId,
        jobId: job.id,
        name: `short-${i}.mp4`,
        type: 'video',
        contentType: s.crop.contentType,
        sizeBytes: stored.get(s.crop.objectKey)!,
        lengthSec: s.endTime - s.startTime,
        objectKey: s.crop.objectKey,
        thumbnailKey: s.crop.thumbnailKey ?? null,
        tags: ['short'],
        description: s.title,
      });
    }
  });
  return files;
}

/** The job's `data` once its analysis completed. */
function completedData(result: AnalyzeVideoResult) {
  const shorts: StoredShort[] = result.shorts.map((s, i) => ({
    id: i,
    title: s.title,
    // The picker's shorts are named from their words; a predefined short keeps the client's title.
    titleSource: s.startId === null ? 'user' : s.titledBy === 'model' ? 'model' : 'transcript',
    reason: s.reason,
    ...(s.score !== undefined && s.scores ? { score: s.score, scores: s.scores } : {}),
    startId: s.startId,
    endId: s.endId,
    startTime: round3(s.startTime),
    endTime: round3(s.endTime),
    text: s.text,
    cropObjectKey: s.crop?.objectKey ?? null,
    reframe: s.reframe ?? null,
    ...bandOf(s.reframe, s.detections, result.reframePlan?.output),
  }));
  return {
    transcription: { ...result.transcript, durationSec: result.durationSec },
    shorts,
    source: {
      objectKey: result.source.objectKey,
      width: result.source.width,
      height: result.source.height,
      fps: result.source.fps ?? null,
      audioStream: result.source.audioStream ?? null,
    },
    ...(result.notes?.length ? { notes: result.notes } : {}),
    ...(result.reframePlan ? { reframePlan: result.reframePlan } : {}),
  };
}

/** The job's webhook, when it has one, told how the job ended. */
async function notifyJob(app: AnalysisApp, c: Queryable, job: JobRow, updated: JobRow, ended: { reason: string } | null) {
  if (!job.webhook) return;
  const event = ended ? 'job.failed' : 'job.completed';
  const view = await bearerView(updated, app.urls);
  const body = JSON.stringify({
    event,
    jobId: job.id,
    status: ended ? JOB_STATUS.failed : JOB_STATUS.completed,
    data: ended ? { ...view, message: ended.reason } : view,
  });
  await enqueueWebhook(app.boss, c, { organizationId: job.organizationId, jobId: job.id, url: job.webhook, event, body });
}

async function completeJob(app: AnalysisApp, c: Queryable, task: AnalysisTask, result: AnalyzeVideoResult): Promise<void> {
  if (result.ranged) throw new AppError(500, 'bad_result', 'a ranged analysis completed without its final part');
  if (result.reframing) throw new AppError(500, 'bad_result', 'an analysis completed before its shorts were reframed');
  const job = await lockJob(c, task.subjectId!);
  if (!job || job.status !== JOB_STATUS.processing) return; // archived or already settled: keep nothing twice
  checkShorts(job, task, result);
  const stored = await verifyAnalysisObjects(c, app, task, result);
  const org = (await c.query<{ plan: Plan }>(`SELECT plan FROM organizations WHERE id = $1`, [job.organizationId])).rows[0];

  const files = analysisFiles(job, result, stored);
  // A studio upload was only the way in: the job now keeps its own copy of the source.
  const upload = storedSource(task);
  if (upload?.consume && upload.fileId) await deleteFileRows(c, job.organizationId, { ids: [upload.fileId] });
  await insertFiles(c, files);

  const price = priceFor(app, org.plan, job, task, result.durationSec, result.downloadBytes);
  if (!(await chargeCredits(c, job.organizationId, job.id, job.reservedCredits, price.cost))) {
    throw new AppError(403, 'noEnoughCredit', `Not enough credits to pay for this job (${price.cost.toFixed(2)} needed)`);
  }

  const data = completedData(result);
  // The detections go to their own column: served never, read only by a render that re-plans.
  const detections = result.shorts.some((s) => s.detections) ? JSON.stringify(result.shorts.map((s) => s.detections ?? null)) : null;
  const updated = (
    await c.query<JobRow>(
      `UPDATE jobs SET status = 'COMPLETED', progress = 100, cost = $2, cost_breakdown = $3, data = $4, shorts_count = $5,
           credit_usage_status = 'ACTIVE', duration_sec = $6, download_bytes = $7, reframe_detections = $8::jsonb,
           completed_at = now(), updated_at = now()
         WHERE id = $1 RETURNING ${JOB_COLUMNS}`,
      [job.id, price.cost, price.costBreakDown, data, data.shorts.length, result.durationSec, result.downloadBytes, detections],
    )
  ).rows[0];
  await notifyJob(app, c, job, updated, null);
}

async function failJob(app: AnalysisApp, c: Queryable, task: AnalysisTask, reason: string, code: TaskFailureCode): Promise<void> {
  const job = await lockJob(c, task.subjectId!);
  if (!job || job.status !== JOB_STATUS.processing) return;
  // The analysis was done and refused only for the organization's own limit (its storage filled
  // meanwhile): it is charged at the price reserved for it, as a completed job would be.
  const paidFor =
    code === 'OVER_PLAN_LIMIT' && (await chargeCredits(c, job.organizationId, job.id, job.reservedCredits, Number(job.reservedCredits)));
  if (!paidFor) await releaseCredits(c, job.organizationId, job.id, job.reservedCredits);
  const updated = (
    await c.query<JobRow>(
      `UPDATE jobs SET status = 'FAILED', error_message = $2, credit_usage_status = $3, cost = $4, updated_at = now() WHERE id = $1 RETURNING ${JOB_COLUMNS}`,
      [job.id, reason, paidFor ? 'ACTIVE' : 'RELEASED', paidFor ? Number(job.reservedCredits) : null],
    )
  ).rows[0];
  await notifyJob(app, c, job, updated, { reason });
}

async function afterAnalysis(app: AnalysisApp, task: AnalysisTask, outcome: 'completed' | 'failed'): Promise<void> {
  app.metrics.jobsFinished.labels(outcome === 'completed' ? JOB_STATUS.completed : JOB_STATUS.failed).inc();
  // Nothing half-written stays behind a failed job.
  if (outcome === 'failed') {
    await deletePrefix(app.store, taskObjectPrefix(task));
    await deleteChildrenObjects(app, task);
  }
  // The analysis audio, stored when ranges or shorts' children read it, was for them only.
  else await app.store.delete(taskObjectKey(task, analyzeVideoOutputs.audio));
  const stored = storedSource(task);
  // The staging upload's row went with the completion; its objects (original and thumbnail) go now.
  if (outcome === 'completed' && stored?.consume && stored.fileId)
    await deletePrefix(app.store, stored.objectKey.replace(/original\/[^/]+$/, ''));
  if (outcome === 'completed') await observeQuality(app, task.subjectId!);
}

export function createAnalyzeVideoOutcomeHandler(app: AnalysisApp): TypedOutcomeHandler<'analyze-video'> {
  return {
    prepareLease: (task, payload) => analysisLease(app, task, payload),
    // A long source in two rounds of children: its ranges transcribed (then the final part picks the
    // shorts on an agent), then its shorts reframed (then the coordinator joins them).
    fanOut: async (_c, task, result) => (result.reframing ? shortChildren(app, task, result) : rangeChildren(app, task, result)),
    finishOnAgent: async (_c, task, result, children) =>
      children.type === 'analyze-range' ? finalPartPayload(task, result, children.results) : undefined,
    fanIn: async (c, task, result, children) => {
      if (children.type !== 'reframe-short') throw new Error(`analyze-video joins its ${children.type} children on an agent`);
      return joinReframedShorts(c, task, result, children.results);
    },
    onChildrenProgress: (c, parent, childType, fraction) =>
      childType === 'analyze-range' ? rangesProgressed(c, parent, fraction) : shortsProgressed(c, parent, fraction),

    async onProgress(c, task, _progress, stage, facts) {
      if (facts) await reserveForVideo(app, c, task, facts.durationSec, facts.downloadBytes);
      if (!stage || !isAnalyzeStage(stage)) return;
      const value = ANALYZE_STAGES[stage].jobProgress;
      await c.query(`UPDATE jobs SET progress = GREATEST(progress, $2), updated_at = now() WHERE id = $1 AND status = 'PROCESSING'`, [
        task.subjectId,
        value,
      ]);
    },
    onComplete: (c, task, result) => completeJob(app, c, task, result),
    onFailed: (c, task, reason, code) => failJob(app, c, task, reason, code),
    afterFinish: (task, outcome) => afterAnalysis(app, task, outcome),
  };
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;
