import type { Coordinator } from '../context.js';
import { checkWatermarkUrl } from '../brandings/watermark-import.js';
import type { Queryable } from '../db/db.js';
import { TooManyRequestsError, badRequest, conflict, notFound } from '../errors.js';
import { isId, newId } from '../ids.js';
import type { RenderShortPayload } from '@shorts/common/tasks/render-short';
import { cutsSilences } from '@shorts/common/options/editing';
import { directorSettings, sameDirector } from '@shorts/common/reframe/director';
import type { ShortDetections } from '@shorts/common/reframe/types';
import { detectionsWithin } from '@shorts/common/reframe/restrict';
import { planReframe } from '@shorts/common/reframe/camera';
import { findJob, JOB_STATUS, type JobData } from '../jobs/jobs.js';
import { requireOrganization } from '../tenancy/tenancy.js';
import { checkFetchableUrl } from '@shorts/common/net/url-rules';
import { parseAllowlist } from '@shorts/common/net/address-policy';
import { placeCaptions, type RenderCaptionPosition } from './caption-placement.js';
import { parseTarget, resolveRender, type BrandPresetRow, type RenderBody } from './render-request.js';
import type { RenderCaptionPlacement, RenderStatus } from '@shorts/common/api/renders';

/** A render takes tens of seconds; asking again sooner than this finds the line as it was. */
const RENDER_LIMIT_RETRY_SEC = 30;

const PRESET_COLUMNS = `id, preset, size, options, is_active AS "isActive"`;

export async function findPreset(
  c: Queryable,
  organizationId: string,
  where: { id?: string; isDefault?: boolean },
): Promise<BrandPresetRow | undefined> {
  // A malformed id names no preset: 404 like any other unknown one, never a query error.
  if (where.id !== undefined && !isId(where.id)) return undefined;
  if (where.id)
    return (
      await c.query<BrandPresetRow>(`SELECT ${PRESET_COLUMNS} FROM brand_presets WHERE organization_id = $1 AND id = $2`, [
        organizationId,
        where.id,
      ])
    ).rows[0];
  return (
    await c.query<BrandPresetRow>(`SELECT ${PRESET_COLUMNS} FROM brand_presets WHERE organization_id = $1 AND is_default AND is_active`, [
      organizationId,
    ])
  ).rows[0];
}

/** What a render request decides before anything is queued: its short, preset and size resolved,
 *  the crop path planned again where its settings differ, and where its captions go. */
async function prepareRender(app: Pick<Coordinator, 'db'>, organizationId: string, body: RenderBody) {
  const org = await requireOrganization(app.db.pool, organizationId);
  const job = await findJob(app.db.pool, organizationId, body.id);
  if (!job) throw notFound('Job not found');
  if (job.functionName !== 'VideoShorts') throw badRequest('Only VideoShorts jobs can be rendered');
  if (job.status !== JOB_STATUS.completed || !job.data) throw badRequest(`The job is ${job.status}; only a completed job can be rendered`);
  const data = job.data;
  const shorts = data.shorts;
  const shortId = parseTarget(body.target, shorts.length);
  const short = shorts[shortId]!;
  // A removed short keeps its place so that no other id shifts (short-edits.ts), but is gone.
  if (short.removed) throw notFound(`Short ${shortId} not found in this job (it was removed)`);

  const resolved = resolveRender({
    body,
    plan: org.plan,
    explicitPreset: body.brandPresetId ? await findPreset(app.db.pool, organizationId, { id: body.brandPresetId }) : undefined,
    defaultPreset: await findPreset(app.db.pool, organizationId, { isDefault: true }),
  });

  // A render that places its captions nowhere gets a band away from the faces it frames.
  const recompute = await recomputeFor(app.db.pool, { id: job.id, data }, shortId, resolved.options.director, resolved.size);
  const detections = recompute?.detections ?? (await storedDetections(app.db.pool, job.id, shortId, short));
  const placed = placeCaptions({
    preset: resolved.captionPreset,
    items: resolved.options.style,
    output: resolved.size,
    reframe: recompute ? planReframe(recompute.detections, recompute.director, resolved.size) : (short.reframe ?? null),
    detections,
    words: data.transcription.words,
    range: { start: short.startTime, end: short.endTime },
    maxWordsInPage: resolved.options.maxWordsInPage,
  });
  if (placed.items !== resolved.options.style) resolved.options = { ...resolved.options, style: placed.items };
  return { job, data, shortId, short, resolved, recompute, placed };
}

/** Where a render asked with this body would put its captions, and the style items it would burn
 *  them with: the studio's preview shows exactly that, for any preset and size (nothing is queued). */
export async function renderCaptionPlacement(
  app: Pick<Coordinator, 'db'>,
  organizationId: string,
  body: RenderBody,
): Promise<RenderCaptionPlacement> {
  const { resolved, placed } = await prepareRender(app, organizationId, body);
  return {
    ...placed.position,
    captionPreset: resolved.captionPreset,
    size: { width: resolved.size.width, height: resolved.size.height },
    style: resolved.options.style ?? [],
  };
}

export async function createRender(
  app: Pick<Coordinator, 'db' | 'queue' | 'config'>,
  organizationId: string,
  body: RenderBody,
): Promise<string> {
  const { job, data, shortId, short, resolved, recompute, placed } = await prepareRender(app, organizationId, body);

  let watermark: RenderShortPayload['watermark'] = null;
  const wm = resolved.options.waterMark;
  if (wm?.fileAppId) {
    const file = await app.db.one<{ objectKey: string }>(
      `SELECT object_key AS "objectKey" FROM files WHERE id = $1 AND organization_id = $2 AND type = 'image'`,
      [wm.fileAppId, organizationId],
    );
    if (file) watermark = { objectKey: file.objectKey };
    else if (!wm.waterMarkUrl) throw badRequest('waterMark.fileAppId does not name an image of this organization');
  }
  if (!watermark && wm?.waterMarkUrl) {
    const url = checkFetchableUrl(wm.waterMarkUrl, 'options.waterMark.waterMarkUrl', parseAllowlist(app.config.fetchAllowlist)).toString();
    await checkWatermarkUrl(app, url);
    watermark = { url };
  }

  const words = data.transcription.words.filter((w) => w.end > short.startTime && w.start < short.endTime);
  const id = newId();
  const spec: RenderShortPayload = {
    renderId: id,
    jobId: job.id,
    shortId,
    startTime: short.startTime,
    endTime: short.endTime,
    words,
    sourceObjectKey: data.source.objectKey,
    ...(data.source.audioStream ? { audioStream: data.source.audioStream } : {}),
    output: { width: resolved.size.width, height: resolved.size.height },
    captionPreset: resolved.captionPreset,
    options: resolved.options,
    reframe: short.reframe ?? null,
    recompute,
    watermark,
  };
  if (cutsSilences(resolved.options.editing)) spec.speech = await storedSpeech(app.db.pool, job.id, shortId);
  await app.db.tx(async (c) => {
    // The organization row serialises this organization's creates, so the count cannot be raced.
    await c.query(`SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE`, [organizationId]);
    const active = (
      await c.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM renders WHERE organization_id = $1 AND status IN ('queued', 'progress')`,
        [organizationId],
      )
    ).rows[0].n;
    if (active >= app.config.renderActiveLimit) {
      throw new TooManyRequestsError(
        `This organization already has ${active} renders queued or running (the limit is ${app.config.renderActiveLimit}); retry when one has finished`,
        RENDER_LIMIT_RETRY_SEC,
      );
    }
    await c.query(`INSERT INTO renders (id, organization_id, job_id, short_id, status, spec) VALUES ($1, $2, $3, $4, 'queued', $5)`, [
      id,
      organizationId,
      job.id,
      shortId,
      { ...spec, brandPresetId: resolved.brandPresetId, size: resolved.size, captionPosition: placed.position },
    ]);
    await app.queue.enqueue(c, { type: 'render-short', organizationId, subjectId: id, payload: spec });
  });
  return id;
}

/**
 * A render reuses the stored path unless its director settings (preset and options, completed with
 * the defaults) or its output's shape differ from those the path was planned with; then the agent
 * plans again from the stored detections. A job analysed without detections keeps its stored path.
 */
async function recomputeFor(
  db: Queryable,
  job: { id: string; data: Pick<JobData, 'reframePlan' | 'shorts'> },
  shortId: number,
  director: unknown,
  size: { width: number; height: number },
): Promise<RenderShortPayload['recompute']> {
  const plan = job.data.reframePlan;
  if (!plan) return null;
  const wanted = directorSettings(director);
  const sameShape = Math.abs(size.width / size.height - plan.output.width / plan.output.height) < 0.01;
  if (sameDirector(wanted, plan.director) && sameShape) return null;
  const row = await db.query<{ detections: ShortDetections | null }>(
    `SELECT reframe_detections -> $2::int AS detections FROM jobs WHERE id = $1`,
    [job.id, shortId],
  );
  const stored = row.rows[0]?.detections;
  // The short may have been trimmed since detection: plan over its range only, or keep the centre
  // crop when it now reaches outside what was analysed.
  const short = job.data.shorts[shortId]!;
  const detections = stored ? detectionsWithin(stored, short.startTime, short.endTime) : null;
  const overrides = short.reframe?.overrides;
  return detections ? { director: wanted, detections, ...(overrides?.length ? { overrides } : {}) } : null;
}

/** The faces detection found for the short, over its range as it is now (null where it was not analysed, or the range now reaches outside). */
async function storedDetections(
  db: Queryable,
  jobId: string,
  shortId: number,
  short: { startTime: number; endTime: number },
): Promise<ShortDetections | null> {
  const row = await db.query<{ detections: ShortDetections | null }>(
    `SELECT reframe_detections -> $2::int AS detections FROM jobs WHERE id = $1`,
    [jobId, shortId],
  );
  const stored = row.rows[0]?.detections;
  return stored ? detectionsWithin(stored, short.startTime, short.endTime) : null;
}

/** The voice activity reframing's detection stored for the short, if it ran. */
export async function storedSpeech(db: Queryable, jobId: string, shortId: number): Promise<RenderShortPayload['speech']> {
  const row = await db.query<{ speech: RenderShortPayload['speech'] }>(
    `SELECT reframe_detections -> $2::int -> 'speech' AS speech FROM jobs WHERE id = $1`,
    [jobId, shortId],
  );
  const speech = row.rows[0]?.speech;
  return Array.isArray(speech) ? speech : null;
}

export interface RenderRow {
  id: string;
  status: 'queued' | 'progress' | 'done' | 'error';
  progress: number;
  fileId: string | null;
  sizeBytes: number | null;
  errorMessage: string | null;
  errorCode: string | null;
  objectKey: string | null;
  captionsKey: string | null;
  lengthSec: number | null;
  /** Where its captions were put (spec.captionPosition; absent on renders asked before it was kept). */
  captionPosition?: RenderCaptionPosition | null;
}

/** Section 2.6: queued (with its place in line), progress, done (url, size) or error. */
/** A render still queued or in progress, of this organization; another's, or none, is 404. */
export async function cancellableRender(db: Coordinator['db'], organizationId: string, id: string): Promise<string> {
  if (!isId(id)) throw notFound('Render not found');
  const r = await db.one<{ status: string }>(`SELECT status FROM renders WHERE id = $1 AND organization_id = $2`, [id, organizationId]);
  if (!r) throw notFound('Render not found');
  if (r.status !== 'queued' && r.status !== 'progress')
    throw conflict(`The render has already finished (${r.status === 'done' ? 'done' : 'error'}): there is nothing to cancel`);
  return r.status;
}

export async function renderStatus(
  app: Pick<Coordinator, 'db' | 'urls' | 'queue'>,
  organizationId: string,
  id: string,
): Promise<RenderStatus> {
  if (!isId(id)) throw notFound('Render not found');
  const r = await app.db.one<RenderRow>(
    `SELECT r.id, r.status, r.progress, r.file_id AS "fileId", r.size_bytes AS "sizeBytes", r.error_message AS "errorMessage",
            r.error_code AS "errorCode", r.spec -> 'captionPosition' AS "captionPosition", f.object_key AS "objectKey", f.captions_key AS "captionsKey", f.length_sec AS "lengthSec"
     FROM renders r LEFT JOIN files f ON f.id = r.file_id
     WHERE r.id = $1 AND r.organization_id = $2`,
    [id, organizationId],
  );
  if (!r) throw notFound('Render not found');
  // captionPosition (beyond the contract): where the captions were put, and whether that was chosen
  // automatically to keep them off a framed face.
  const placed = r.captionPosition ? { captionPosition: r.captionPosition } : {};
  switch (r.status) {
    case 'queued': {
      // Renders of every organization that start before this one, in the lease query's fair order.
      const ahead = await app.queue.tasksAhead(id, 'render-short');
      return withStage(
        { type: 'queued', status: 'QUEUED', queuePosition: (ahead ?? 0) + 1, progress: 0, ...placed },
        await app.queue.waitingReason(id),
      );
    }
    case 'progress':
      // A render whose agent was lost goes back to the queue and may wait there too.
      return withStage({ type: 'progress', progress: round3(r.progress), ...placed }, await app.queue.waitingReason(id));
    case 'done':
      if (!r.objectKey) return { type: 'error', message: 'The rendered file was deleted', code: 'FILE_DELETED' };
      // fileId (beyond the contract): the render as a file of the organization, e.g. to post it by fileId.
      // length (beyond the contract, named as the file's): the output's seconds, shorter than the
      // short when jump cuts removed silences or fillers.
      // captionsUrl (beyond the contract): the ASS caption script burned into the picture, as text,
      // so a client can check the words its captions said; absent for a short with no words.
      return {
        type: 'done',
        progress: 1,
        url: (await app.urls.sign(r.objectKey, 'GET')).url,
        size: Number(r.sizeBytes),
        length: Number(r.lengthSec),
        fileId: r.fileId,
        ...(r.captionsKey ? { captionsUrl: (await app.urls.sign(r.captionsKey, 'GET')).url } : {}),
        ...placed,
      };
    case 'error':
      return { type: 'error', message: r.errorMessage ?? 'Rendering failed', code: r.errorCode ?? 'RENDERING_ERROR' };
  }
}

/** `stage` says why a render waits when no connected agent can take it; `message` stays for failures (contract 2.6). */
const withStage = <Status extends RenderStatus & { type: 'queued' | 'progress' }>(status: Status, waiting: string | undefined): Status =>
  waiting ? { ...status, stage: waiting } : status;

const round3 = (n: number) => Math.round(n * 1000) / 1000;
