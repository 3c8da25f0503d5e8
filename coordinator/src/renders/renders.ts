import type { Coordinator } from '../coordinator.js';
import type { Queryable } from '../db/db.js';
import { badRequest, notFound } from '../../../common/src/errors.js';
import { isId, newId } from '../../../common/src/ids.js';
import type { TimedWord } from '../../../common/src/analyze-result.js';
import { findJob } from '../jobs/jobs.js';
import type { StoredShort } from '../jobs/job-views.js';
import { insertFiles } from '../files/files.js';
import { requireOrganization } from '../tenancy/tenancy.js';
import { taskObjectPrefix, type TaskOutcomeHandler } from '../tasks/task-queue.js';
import { deletePrefix } from '../jobs/analyze-outcome.js';
import { checkFetchableUrl } from '../api/url-rules.js';
import { parseAllowlist } from '../../../common/src/net/address-policy.js';
import { parseTarget, resolveRender, type BrandPresetRow, type RenderBody } from './render-request.js';

/** What the render-short task receives (plus fresh signed URLs added at lease time). */
export interface RenderTaskSpec {
  renderId: string;
  jobId: string;
  shortId: number;
  startTime: number;
  endTime: number;
  words: TimedWord[];
  sourceObjectKey: string;
  output: { width: number; height: number };
  captionPreset: string;
  options: Record<string, any>;
  reframe: unknown;
  watermark: { objectKey?: string; url?: string } | null;
}

const PRESET_COLUMNS = `id, preset, size, options, is_active AS "isActive"`;

async function findPreset(c: Queryable, organizationId: string, where: { id?: string; isDefault?: boolean }): Promise<BrandPresetRow | undefined> {
  // A malformed id names no preset: 404 like any other unknown one, never a query error.
  if (where.id !== undefined && !isId(where.id)) return undefined;
  if (where.id) return (await c.query(`SELECT ${PRESET_COLUMNS} FROM brand_presets WHERE organization_id = $1 AND id = $2`, [organizationId, where.id])).rows[0];
  return (await c.query(`SELECT ${PRESET_COLUMNS} FROM brand_presets WHERE organization_id = $1 AND is_default AND is_active`, [organizationId])).rows[0];
}

export async function createRender(app: Coordinator, organizationId: string, body: RenderBody): Promise<string> {
  const org = await requireOrganization(app.db.pool, organizationId);
  const job = await findJob(app.db.pool, organizationId, body.id);
  if (!job) throw notFound('Job not found');
  if (job.functionName !== 'VideoShorts') throw badRequest('Only VideoShorts jobs can be rendered');
  if (job.status !== 'COMPLETED') throw badRequest(`The job is ${job.status}; only a completed job can be rendered`);
  const shorts: StoredShort[] = job.data?.shorts ?? [];
  const shortId = parseTarget(body.target, shorts.length);
  const short = shorts[shortId]!;

  const resolved = resolveRender({
    body,
    plan: org.plan,
    explicitPreset: body.brandPresetId ? await findPreset(app.db.pool, organizationId, { id: body.brandPresetId }) : undefined,
    defaultPreset: await findPreset(app.db.pool, organizationId, { isDefault: true }),
  });

  let watermark: RenderTaskSpec['watermark'] = null;
  const wm = resolved.options.waterMark;
  if (wm?.fileAppId) {
    const file = await app.db.one<{ objectKey: string }>(
      `SELECT object_key AS "objectKey" FROM files WHERE id = $1 AND organization_id = $2 AND type = 'image'`, [wm.fileAppId, organizationId],
    );
    if (file) watermark = { objectKey: file.objectKey };
    else if (!wm.waterMarkUrl) throw badRequest('waterMark.fileAppId does not name an image of this organization');
  }
  if (!watermark && wm?.waterMarkUrl) {
    watermark = { url: checkFetchableUrl(wm.waterMarkUrl, 'options.waterMark.waterMarkUrl', parseAllowlist(app.config.fetchAllowlist)).toString() };
  }

  const words = ((job.data?.transcription?.words ?? []) as TimedWord[]).filter((w) => w.end > short.startTime && w.start < short.endTime);
  const id = newId();
  const spec: RenderTaskSpec = {
    renderId: id,
    jobId: job.id,
    shortId,
    startTime: short.startTime,
    endTime: short.endTime,
    words,
    sourceObjectKey: job.data.source.objectKey,
    output: { width: resolved.size.width, height: resolved.size.height },
    captionPreset: resolved.captionPreset,
    options: resolved.options,
    reframe: short.reframe ?? null,
    watermark,
  };
  await app.db.tx(async (c) => {
    await c.query(
      `INSERT INTO renders (id, organization_id, job_id, short_id, status, spec) VALUES ($1, $2, $3, $4, 'queued', $5)`,
      [id, organizationId, job.id, shortId, { ...spec, brandPresetId: resolved.brandPresetId, size: resolved.size }],
    );
    await app.queue.enqueue(c, { type: 'render-short', organizationId, subjectId: id, payload: spec as unknown as Record<string, unknown> });
  });
  return id;
}

interface RenderRow {
  id: string;
  status: 'queued' | 'progress' | 'done' | 'error';
  progress: number;
  fileId: string | null;
  sizeBytes: number | null;
  errorMessage: string | null;
  errorCode: string | null;
  objectKey: string | null;
}

/** Section 2.6: queued (with its place in line), progress, done (url, size) or error. */
export async function renderStatus(app: Coordinator, organizationId: string, id: string): Promise<Record<string, unknown>> {
  if (!isId(id)) throw notFound('Render not found');
  const r = await app.db.one<RenderRow>(
    `SELECT r.id, r.status, r.progress, r.file_id AS "fileId", r.size_bytes AS "sizeBytes", r.error_message AS "errorMessage",
            r.error_code AS "errorCode", f.object_key AS "objectKey"
     FROM renders r LEFT JOIN files f ON f.id = r.file_id
     WHERE r.id = $1 AND r.organization_id = $2`,
    [id, organizationId],
  );
  if (!r) throw notFound('Render not found');
  switch (r.status) {
    case 'queued': {
      const ahead = await app.db.one<{ n: number }>(
        `SELECT count(*)::int AS n FROM tasks t, tasks mine
         WHERE mine.subject_id = $1 AND mine.type = 'render-short' AND t.type = 'render-short' AND t.state = 'queued'
           AND (t.priority > mine.priority OR (t.priority = mine.priority AND (t.queued_at, t.id) < (mine.queued_at, mine.id)))`,
        [id],
      );
      return { type: 'queued', status: 'QUEUED', queuePosition: (ahead?.n ?? 0) + 1, progress: 0 };
    }
    case 'progress':
      return { type: 'progress', progress: round3(r.progress) };
    case 'done':
      if (!r.objectKey) return { type: 'error', message: 'The rendered file was deleted', code: 'FILE_DELETED' };
      return { type: 'done', progress: 1, url: (await app.urls.sign(r.objectKey, 'GET')).url, size: Number(r.sizeBytes) };
    case 'error':
      return { type: 'error', message: r.errorMessage ?? 'Rendering failed', code: r.errorCode ?? 'RENDERING_ERROR' };
  }
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

export interface RenderResult {
  objectKey: string;
  sizeBytes: number;
  contentType: string;
  durationSec: number;
  thumbnailKey?: string | null;
}

export function createRenderOutcomeHandler(app: Coordinator): TaskOutcomeHandler {
  return {
    async prepareLease(task) {
      const spec = task.payload as unknown as RenderTaskSpec;
      const sourceUrl = (await app.urls.sign(spec.sourceObjectKey, 'GET', 6 * 3600)).url;
      const watermarkObjectUrl = spec.watermark?.objectKey ? (await app.urls.sign(spec.watermark.objectKey, 'GET', 6 * 3600)).url : null;
      return { sourceUrl, watermarkObjectUrl };
    },

    async onProgress(c, task, progress) {
      await c.query(
        `UPDATE renders SET status = 'progress', progress = GREATEST(progress, $2), updated_at = now() WHERE id = $1 AND status IN ('queued', 'progress')`,
        [task.subjectId, progress],
      );
    },

    async onComplete(c, task, raw) {
      const result = raw as unknown as RenderResult;
      const render = (await c.query(`SELECT id, organization_id AS "organizationId", job_id AS "jobId", status FROM renders WHERE id = $1 FOR UPDATE`, [task.subjectId])).rows[0];
      if (!render || render.status === 'done' || render.status === 'error') return;
      const [fileId] = await insertFiles(c, [{
        organizationId: render.organizationId, jobId: render.jobId, name: `render-${render.id}.mp4`, type: 'video',
        contentType: result.contentType, sizeBytes: result.sizeBytes, lengthSec: result.durationSec, objectKey: result.objectKey,
        thumbnailKey: result.thumbnailKey ?? null, tags: ['render'],
      }]);
      await c.query(
        `UPDATE renders SET status = 'done', progress = 1, file_id = $2, size_bytes = $3, updated_at = now() WHERE id = $1`,
        [render.id, fileId, result.sizeBytes],
      );
    },

    async onFailed(c, task, reason, code) {
      await c.query(
        `UPDATE renders SET status = 'error', error_message = $2, error_code = $3, updated_at = now() WHERE id = $1 AND status IN ('queued', 'progress')`,
        [task.subjectId, reason, code === 'TASK_FAILED' ? 'RENDERING_ERROR' : code],
      );
    },

    async afterFinish(task, outcome) {
      app.metrics.rendersFinished.labels(outcome).inc();
      if (outcome === 'failed') await deletePrefix(app, taskObjectPrefix(task));
    },
  };
}
