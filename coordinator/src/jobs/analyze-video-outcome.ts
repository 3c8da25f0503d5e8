import type { Coordinator } from '../context.js';
import type { Queryable } from '../db/db.js';
import { AppError, badRequest } from '../errors.js';
import { ANALYZE_STAGES, analyzeVideoOutputs, isAnalyzeStage, type AnalyzeVideoResult } from '@shorts/common/tasks/analyze-video';
import { parseStoredPayload } from '@shorts/common/tasks/contracts';
import type { ReframeQuality } from '@shorts/common/reframe/types';
import { chargeCredits, releaseCredits, reserveEstimate } from '../credits/credits.js';
import { deleteFileRows, insertFiles, type NewFile } from '../files/files.js';
import { deletePrefix } from '../storage/object-store.js';
import { taskObjectKey, taskObjectPrefix, type TaskRow } from '../tasks/task-queue.js';
import type { TypedOutcomeHandler } from '../tasks/typed-outcome.js';
import type { Plan } from '../tenancy/plans.js';
import { enqueueWebhook } from '../webhooks/webhooks.js';
import { bandOf, bearerView } from './job-views.js';
import { checkStorageRoom, JOB_COLUMNS, JOB_STATUS, type JobRow, type StoredShort } from './jobs.js';
import { priceJob } from './pricing.js';
import { deleteChildrenObjects } from '../files/task-objects.js';
import { finalPartPayload, rangeChildren, rangesFromSec, rangesProgressed } from './analysis-ranges.js';
import { joinReframedShorts, shortChildren, shortsProgressed, verifyAnalysisObjects } from './analysis-shorts.js';
import { freeSlots } from '../tasks/liveness.js';

async function lockJob(c: Queryable, id: string): Promise<JobRow | undefined> {
  return (await c.query<JobRow>(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1 FOR UPDATE`, [id])).rows[0];
}

/** Checks what the agent produced against what the client asked, now that the duration is known. */
function checkShorts(job: JobRow, result: AnalyzeVideoResult): void {
  const asked = job.options?.predefinedShorts;
  for (const s of asked ?? []) {
    if (s.end > result.durationSec + 0.05) {
      throw badRequest(`The short "${s.title}" ends at ${s.end} s, past the end of the video (${result.durationSec.toFixed(2)} s)`);
    }
  }
  for (const s of result.shorts) {
    if (!(s.endTime > s.startTime) || s.startTime < 0 || s.endTime > result.durationSec + 0.05)
      throw new AppError(500, 'bad_result', 'agent returned a short outside the video');
    const longest = job.options?.clipLength?.max ?? 90;
    if (!asked && s.endTime - s.startTime > longest + 0.05)
      throw new AppError(500, 'bad_result', `agent returned an automatic short over ${longest} seconds`);
    const range = job.options?.range;
    if (!asked && range && (s.startTime < range.start - 0.05 || s.endTime > range.end + 0.05))
      throw new AppError(500, 'bad_result', 'agent returned a short outside the range asked for');
  }
}

export function createAnalyzeVideoOutcomeHandler(
  app: Pick<Coordinator, 'config' | 'store' | 'urls' | 'boss' | 'metrics' | 'db'>,
): TypedOutcomeHandler<'analyze-video'> {
  /**
   * As soon as the agent knows the video's length the job's reservation grows to its price, so a
   * job the credits cannot pay for fails now, before transcription, and jobs running side by side
   * cannot promise the same credits twice. Idempotent: a re-leased task reports the same facts.
   */
  async function reserveForVideo(c: Queryable, task: TaskRow, durationSec: number, downloadBytes: number): Promise<void> {
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
    const price = priceJob(
      {
        plan: org.plan,
        durationSec,
        fromYoutube: !!job.youtubeVideoId,
        downloadBytes,
        predefinedShorts: job.options?.predefinedShorts,
        range: job.options?.range,
      },
      app.config.creditsPerDollar,
    );
    if (!(await reserveEstimate(c, job.organizationId, job.id, Number(job.reservedCredits), price.cost))) {
      const available = Number(org.credits) - Number(org.reservedCredits) + Number(job.reservedCredits);
      throw new AppError(
        403,
        'noEnoughCredit',
        `Not enough credits for this video: ${(durationSec / 60).toFixed(1)} minutes cost ${price.cost.toFixed(2)} credits, ${Math.max(0, available).toFixed(2)} available`,
      );
    }
  }

  const storedSource = (task: TaskRow) => {
    const { source } = parseStoredPayload('analyze-video', task.payload);
    return source.kind === 'object' ? source : undefined;
  };

  /** Each stored short's path quality, once the job's completion has committed (one analysis task
   *  completes a job, once). */
  async function observeQuality(jobId: string): Promise<void> {
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

  return {
    /** A video in the organization's storage reaches the agent by a signed URL made at lease time. */
    async prepareLease(task, payload) {
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
    },

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
      if (facts) await reserveForVideo(c, task, facts.durationSec, facts.downloadBytes);
      if (!stage || !isAnalyzeStage(stage)) return;
      const value = ANALYZE_STAGES[stage].jobProgress;
      await c.query(`UPDATE jobs SET progress = GREATEST(progress, $2), updated_at = now() WHERE id = $1 AND status = 'PROCESSING'`, [
        task.subjectId,
        value,
      ]);
    },

    async onComplete(c, task, result) {
      if (result.ranged) throw new AppError(500, 'bad_result', 'a ranged analysis completed without its final part');
      if (result.reframing) throw new AppError(500, 'bad_result', 'an analysis completed before its shorts were reframed');
      const job = await lockJob(c, task.subjectId!);
      if (!job || job.status !== JOB_STATUS.processing) return; // archived or already settled: keep nothing twice
      checkShorts(job, result);
      const stored = await verifyAnalysisObjects(c, app, task, result);
      const org = (await c.query<{ plan: Plan }>(`SELECT plan FROM organizations WHERE id = $1`, [job.organizationId])).rows[0];

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
      // A studio upload was only the way in: the job now keeps its own copy of the source.
      const upload = storedSource(task);
      if (upload?.consume && upload.fileId) await deleteFileRows(c, job.organizationId, { ids: [upload.fileId] });
      await insertFiles(c, files);

      const price = priceJob(
        {
          plan: org.plan,
          durationSec: result.durationSec,
          fromYoutube: !!job.youtubeVideoId,
          downloadBytes: result.downloadBytes,
          predefinedShorts: job.options?.predefinedShorts,
          range: job.options?.range,
        },
        app.config.creditsPerDollar,
      );
      if (!(await chargeCredits(c, job.organizationId, job.id, job.reservedCredits, price.cost))) {
        throw new AppError(403, 'noEnoughCredit', `Not enough credits to pay for this job (${price.cost.toFixed(2)} needed)`);
      }

      const shorts: StoredShort[] = result.shorts.map((s, i) => ({
        id: i,
        title: s.title,
        // The picker's shorts are named from their words (or by the model); a predefined short keeps the client's title.
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
      const data = {
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
      // The detections go to their own column: served never, read only by a render that re-plans.
      const detections = result.shorts.some((s) => s.detections) ? JSON.stringify(result.shorts.map((s) => s.detections ?? null)) : null;
      const updated = (
        await c.query<JobRow>(
          `UPDATE jobs SET status = 'COMPLETED', progress = 100, cost = $2, cost_breakdown = $3, data = $4, shorts_count = $5,
           credit_usage_status = 'ACTIVE', duration_sec = $6, download_bytes = $7, reframe_detections = $8::jsonb,
           completed_at = now(), updated_at = now()
         WHERE id = $1 RETURNING ${JOB_COLUMNS}`,
          [job.id, price.cost, price.costBreakDown, data, shorts.length, result.durationSec, result.downloadBytes, detections],
        )
      ).rows[0];
      if (job.webhook) {
        const body = JSON.stringify({
          event: 'job.completed',
          jobId: job.id,
          status: JOB_STATUS.completed,
          data: await bearerView(updated, app.urls),
        });
        await enqueueWebhook(app.boss, c, {
          organizationId: job.organizationId,
          jobId: job.id,
          url: job.webhook,
          event: 'job.completed',
          body,
        });
      }
    },

    async onFailed(c, task, reason, code) {
      const job = await lockJob(c, task.subjectId!);
      if (!job || job.status !== JOB_STATUS.processing) return;
      // The analysis was done and refused only for the organization's own limit (its storage filled
      // meanwhile): it is charged at the price reserved for it, as a completed job would be.
      const paidFor =
        code === 'OVER_PLAN_LIMIT' &&
        (await chargeCredits(c, job.organizationId, job.id, job.reservedCredits, Number(job.reservedCredits)));
      if (!paidFor) await releaseCredits(c, job.organizationId, job.id, job.reservedCredits);
      const updated = (
        await c.query<JobRow>(
          `UPDATE jobs SET status = 'FAILED', error_message = $2, credit_usage_status = $3, cost = $4, updated_at = now() WHERE id = $1 RETURNING ${JOB_COLUMNS}`,
          [job.id, reason, paidFor ? 'ACTIVE' : 'RELEASED', paidFor ? Number(job.reservedCredits) : null],
        )
      ).rows[0];
      if (job.webhook) {
        const body = JSON.stringify({
          event: 'job.failed',
          jobId: job.id,
          status: JOB_STATUS.failed,
          data: { ...(await bearerView(updated, app.urls)), message: reason },
        });
        await enqueueWebhook(app.boss, c, {
          organizationId: job.organizationId,
          jobId: job.id,
          url: job.webhook,
          event: 'job.failed',
          body,
        });
      }
    },

    async afterFinish(task: TaskRow, outcome) {
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
      if (outcome === 'completed') await observeQuality(task.subjectId!);
    },
  };
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;
