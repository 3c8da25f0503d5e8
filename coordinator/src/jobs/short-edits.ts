// Editing a completed job's shorts in place: trim, add, remove, rename. Nothing is downloaded,
// transcribed or charged again; the shorts in jobs.data change and every later render reads them.
//
// Short ids are positions in jobs.data.shorts, which renders (renders.short_id) and the per-short
// jobs.reframe_detections array both use. So an id is never shifted nor reused: a removed short stays
// in the array marked `removed` (hidden from every view, 404 as a render target) and an added short
// takes the next position.
//
// Reframing follows the range without a detection pass: inside the range detection analysed for the
// short (its stored ShortDetections' start/end) the path is planned again from a slice of those
// detections; outside it the short falls back to the centre crop (reframe null, `reframeStale`).
// An added short borrows the detections of any short whose analysed range covers it.
//
// Each change bumps data.shortsRevision; an edit names the revision it was made on, so of two
// editors working from one page the second gets a 409 instead of overwriting the first.
import { z } from 'zod';
import { AppError, badRequest, conflict, notFound } from '../errors.js';
import { isId } from '../ids.js';
import { planReframe } from '@shorts/common/reframe/camera';
import { detectionsWithin } from '@shorts/common/reframe/restrict';
import type { Reframe, ShortDetections } from '@shorts/common/reframe/types';
import type { ShortEditResponse } from '@shorts/common/api/jobs';
import type { TitleOptions } from '@shorts/common/text/title';
import type { Db } from '../db/db.js';
import { PLAN_LIMITS, type Plan } from '../tenancy/plans.js';
import { JOB_STATUS, type JobData, type StoredShort } from './jobs.js';
import { bandOf } from './job-views.js';
import { remapShort, titleSourceOf } from './transcript-edits.js';
import { keepFraming } from './framing.js';

/** Shorter than this is no short: there is nothing to caption or frame. Not in the contract, which
 *  only bounds the longest (90 s, 300 s on Pro and Business, as for predefined shorts). */
export const MIN_SHORT_SEC = 1;

const seconds = z.number().finite().min(0);
const title = z.string().trim().min(1, 'title cannot be empty').max(200);
export const revision = z
  .number()
  .int()
  .min(0)
  .describe(
    "The shorts' revision the edit was made on (`data.shortsRevision` in the bearer-token form, 0 before any edit); a stale one is refused with 409",
  );
export const organizationId = z.string().optional().describe('For session and bearer-token callers, here or in the query');

export const addShortBodySchema = z.object({ organizationId, revision, title, startTime: seconds, endTime: seconds });
export const updateShortBodySchema = z.object({
  organizationId,
  revision,
  title: title.optional(),
  startTime: seconds.optional(),
  endTime: seconds.optional(),
});
export const removeShortQuerySchema = z.object({
  organizationId,
  revision: z.coerce.number().int().min(0).describe("As in the body of the other edits: the shorts' revision the removal was made on"),
});

export type AddShortBody = z.infer<typeof addShortBodySchema>;
export type UpdateShortBody = z.infer<typeof updateShortBodySchema>;

/** What a short edit answers (`shortEditResponseSchema`); the short is served as stored, less the
 *  camera's own path under the overrides. */
export type EditedShort = ShortEditResponse & { short: Omit<StoredShort, 'plannedReframe' | 'titleSource' | 'cropObjectKey'> };

interface LockedJob {
  data: JobData;
  detections: Array<ShortDetections | null>;
  plan: Plan;
  /** What a title made again from the words is made with: the job's `topics`, as the picker used them. */
  titling: TitleOptions;
}

/** Locks the job row so the revision check and the write are one step, then applies `change`. */
export async function editShorts(
  db: Db,
  organizationId: string,
  jobId: string,
  bodyRevision: number,
  change: (job: LockedJob) => { shorts: StoredShort[]; detections?: Array<ShortDetections | null>; short: StoredShort },
): Promise<EditedShort> {
  if (!isId(jobId)) throw notFound('Job not found');
  return db.tx(async (c) => {
    const row = (
      await c.query<{
        status: string;
        data: JobData | null;
        detections: Array<ShortDetections | null> | null;
        plan: Plan;
        topics: string[] | null;
      }>(
        `SELECT j.status, j.data, j.reframe_detections AS detections, o.plan, j.options -> 'topics' AS topics
       FROM jobs j JOIN organizations o ON o.id = j.organization_id
       WHERE j.id = $1 AND j.organization_id = $2 AND j.archived_at IS NULL FOR UPDATE OF j`,
        [jobId, organizationId],
      )
    ).rows[0];
    if (!row) throw notFound('Job not found');
    if (row.status !== JOB_STATUS.completed || !row.data?.transcription) throw conflict('Shorts can be edited once the job has COMPLETED');
    const current = row.data.shortsRevision ?? 0;
    if (bodyRevision !== current) {
      throw new AppError(
        409,
        'Conflict',
        `The shorts are at revision ${current}, not ${bodyRevision}: they were edited meanwhile; reload them and edit again`,
      );
    }
    const changed = change({
      data: row.data,
      detections: row.detections ?? [],
      plan: row.plan,
      titling: { topics: Array.isArray(row.topics) ? row.topics : undefined },
    });
    const next: JobData = { ...row.data, shorts: changed.shorts, shortsRevision: current + 1 };
    const live = changed.shorts.filter((s) => !s.removed).length;
    await c.query(
      `UPDATE jobs SET data = $3, shorts_count = $4, reframe_detections = COALESCE($5::jsonb, reframe_detections), updated_at = now()
       WHERE id = $1 AND organization_id = $2`,
      [jobId, organizationId, next, live, changed.detections ? JSON.stringify(changed.detections) : null],
    );
    // Who made its title, as the job's views say it.
    const titleSource = titleSourceOf(changed.short, next.transcription.words);
    // The camera's own path under the overrides stays in jobs.data: `reframe` is what is served; the
    // crop clip's storage key is internal (the job's views serve a signed `cropFileUrl` instead).
    const { plannedReframe: _planned, cropObjectKey: _cropKey, ...shown } = changed.short;
    // Every edit plans `reframe` (null for the centre crop): `?? null` only says so to the compiler.
    return { revision: current + 1, short: { ...shown, reframe: shown.reframe ?? null, titleSource } };
  });
}

/** The short with id `shortId`, unless removed: 404 otherwise. */
export function liveShort(shorts: readonly StoredShort[], shortId: string): StoredShort {
  const id = /^\d+$/.test(shortId) ? Number(shortId) : NaN;
  const short = shorts[id];
  if (!short || short.removed) throw notFound(`Short ${shortId} not found in this job`);
  return short;
}

function checkRange(startTime: number, endTime: number, data: JobData, plan: Plan): void {
  const duration = data.transcription.durationSec;
  if (!(endTime > startTime)) throw badRequest('endTime must be greater than startTime');
  if (Number.isFinite(duration) && endTime > duration + 0.001) {
    throw badRequest(`endTime must be at most the source's duration (${duration} s)`);
  }
  const length = endTime - startTime;
  if (length < MIN_SHORT_SEC) throw badRequest(`A short lasts at least ${MIN_SHORT_SEC} second (got ${round3(length)})`);
  const max = PLAN_LIMITS[plan].maxPredefinedShortSec;
  if (length > max) throw badRequest(`A short may last at most ${max} seconds on the ${plan} plan (got ${round3(length)})`);
}

/** The short placed at its (new) range: its words, and its path planned again where it can be. */
function placeShort(short: StoredShort, data: JobData, detections: ShortDetections | null, titling: TitleOptions): StoredShort {
  const placed = remapShort(short, data.transcription.words, data.transcription.words, titling);
  const slice = detections ? detectionsWithin(detections, placed.startTime, placed.endTime) : null;
  let reframe: Reframe | null = null;
  if (slice && data.reframePlan) reframe = planReframe(slice, data.reframePlan.director, data.reframePlan.output);
  const { reframeStale: _was, ...rest } = placed;
  // Stale: the short had a path (or detections) once, but its range now reaches outside what was analysed.
  const stale = !reframe && (detections !== null || !!short.reframe);
  const { captionBand: _band, ...unbanded } = rest;
  return { ...unbanded, reframe, ...(stale ? { reframeStale: true } : {}), ...bandOf(reframe, slice, data.reframePlan?.output) };
}

export async function updateShort(
  db: Db,
  organizationId: string,
  jobId: string,
  shortId: string,
  body: UpdateShortBody,
): Promise<EditedShort> {
  return editShorts(db, organizationId, jobId, body.revision, ({ data, detections, plan, titling }) => {
    const short = liveShort(data.shorts, shortId);
    const startTime = body.startTime ?? short.startTime;
    const endTime = body.endTime ?? short.endTime;
    const moved = startTime !== short.startTime || endTime !== short.endTime;
    if (moved) checkRange(startTime, endTime, data, plan);
    // A typed title is the user's from now on: corrections to the words no longer re-make it (the
    // same title sent back, as a form saving a trim does, changes nothing).
    const typed = body.title !== undefined && body.title !== short.title;
    let next: StoredShort = {
      ...short,
      ...(typed ? { title: body.title, titleSource: 'user' as const } : {}),
      startTime,
      endTime,
    };
    // Framing set by hand follows the trim: clipped to the new range, planned around again.
    if (moved) next = keepFraming(short, placeShort(next, data, detections[short.id] ?? null, titling), data, detections[short.id] ?? null);
    return { shorts: data.shorts.map((s) => (s.id === short.id ? next : s)), short: next };
  });
}

export async function addShort(db: Db, organizationId: string, jobId: string, body: AddShortBody): Promise<EditedShort> {
  return editShorts(db, organizationId, jobId, body.revision, ({ data, detections, plan, titling }) => {
    checkRange(body.startTime, body.endTime, data, plan);
    const id = data.shorts.length;
    // Any short's analysed range that covers the new one gives it detections: no new pass.
    const covering = detections.find((d) => d && detectionsWithin(d, body.startTime, body.endTime)) ?? null;
    const short = placeShort(
      {
        id,
        title: body.title,
        titleSource: 'user',
        reason: null,
        startId: null,
        endId: null,
        startTime: body.startTime,
        endTime: body.endTime,
        text: '',
        cropObjectKey: null,
        reframe: null,
      },
      data,
      covering,
      titling,
    );
    const nextDetections = covering ? Array.from({ length: id + 1 }, (_, i) => (i === id ? covering : (detections[i] ?? null))) : undefined;
    return { shorts: [...data.shorts, short], detections: nextDetections, short };
  });
}

export async function removeShort(
  db: Db,
  organizationId: string,
  jobId: string,
  shortId: string,
  bodyRevision: number,
): Promise<EditedShort> {
  return editShorts(db, organizationId, jobId, bodyRevision, ({ data }) => {
    const short = liveShort(data.shorts, shortId);
    const removed: StoredShort = { ...short, removed: true };
    return { shorts: data.shorts.map((s) => (s.id === short.id ? removed : s)), short: removed };
  });
}

const round3 = (v: number) => Math.round(v * 1000) / 1000;
