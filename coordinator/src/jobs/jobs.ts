import { prepared, type Db, type Queryable } from '../db/db.js';
import { AppError, badRequest, forbidden, notFound } from '../errors.js';
import { isId, newId } from '../ids.js';
import type { TaskQueue } from '../tasks/task-queue.js';
import type { Organization, User } from '../tenancy/tenancy.js';
import { PLAN_LIMITS, toMB, type Plan } from '../tenancy/plans.js';
import { reserveCredits } from '../credits/credits.js';
import { MINIMUM_JOB_COST } from './pricing.js';
import { pickingOf, type JobOptions, type ValidatedJob } from './job-input.js';
import type {
  AnalyzeVideoPayload,
  AnalyzeVideoResult,
  ReframePlan,
  ShortScores,
  StoredSource as AnalyzeStoredSource,
} from '@shorts/common/tasks/analyze-video';
import type { Reframe } from '@shorts/common/reframe/types';
import type { CaptionBand } from '@shorts/common/reframe/caption-band';
import type { TitleSource } from '@shorts/common/api/jobs';

export const JOB_STATUS = { processing: 'PROCESSING', completed: 'COMPLETED', failed: 'FAILED' } as const;
export type JobStatus = (typeof JOB_STATUS)[keyof typeof JOB_STATUS];

// What a completed job keeps of its analysis; the API's views of it are in job-views.ts.
export interface StoredShort {
  id: number;
  title: string;
  /** 'transcript': made from the short's words (made again when they are corrected); 'user': typed
   *  (or given as a predefined short). Absent on shorts stored before it was kept: transcript-edits.ts
   *  tells them apart by whether the title is still the one its words make. */
  titleSource?: TitleSource;
  reason?: string | null;
  /** Automatic shorts picked since issue 40: the picker's score (0-100) and its parts. */
  score?: number;
  scores?: ShortScores;
  startId: number | null;
  endId: number | null;
  startTime: number;
  endTime: number;
  text: string;
  cropObjectKey?: string | null;
  /** The crop path; null for shorts analysed before reframing (or without detection). */
  reframe?: Reframe | null;
  /** Trimmed outside the range detection analysed: the centre crop until it is analysed again. */
  reframeStale?: true;
  /** The camera's path before the framing overrides (`reframe.overrides`), kept while any are set so
   *  that changing them starts from it when no detections can plan it again (framing-edits.ts). */
  plannedReframe?: Reframe | null;
  /** Where captions go when a render does not say: set (top or center) only where the framed face
   *  sits in the lower third (common/src/reframe/caption-band.ts); absent means the lower third. */
  captionBand?: CaptionBand;
  /** Removed in the studio or by the API: kept so that no other short's id shifts (short-edits.ts). */
  removed?: boolean;
}

/** What a completed job keeps of its analysis (jobs.data). */
export interface JobData {
  /** `revision` counts the corrections made to it (transcript-edits.ts); absent before the first. */
  transcription: AnalyzeVideoResult['transcript'] & { durationSec: number; revision?: number };
  shorts: StoredShort[];
  /** `fps` is null for jobs analysed before it was kept, or when the source's rate was unknown. */
  source: { objectKey: string; width: number; height: number; fps?: number | null; audioStream?: number | null };
  /** What the analysis said of the source (no speech, the sound track it heard). */
  notes?: string[];
  /** What the shorts' paths were planned for; absent when none has one. */
  reframePlan?: ReframePlan;
  /** Counts the edits made to the shorts (short-edits.ts); absent before the first. */
  shortsRevision?: number;
}

export interface JobRow {
  id: string;
  organizationId: string;
  userId: string | null;
  /** The only function there is (inserted by createJob). */
  functionName: 'VideoShorts';
  title: string | null;
  description: string | null;
  status: JobStatus;
  progress: number;
  /** The column's CHECK admits these two. */
  source: JobSource;
  youtubeVideoId: string | null;
  fileUrl: string | null;
  /** As normalised on creation (job-input.ts `JobOptions`). */
  options: JobOptions;
  webhook: string | null;
  reservedCredits: number;
  creditUsageStatus: string;
  cost: number | null;
  costBreakdown: { shortGen: number; youtubeProcessing: number; overlappingShorts?: number } | null;
  shortsCount: number;
  /** Set when the job completed. */
  data: JobData | null;
  errorMessage: string | null;
  createdAt: Date;
  completedAt: Date | null;
}

export const JOB_COLUMNS = `id, organization_id AS "organizationId", user_id AS "userId", function_name AS "functionName", title,
  description, status, progress, source, youtube_video_id AS "youtubeVideoId", file_url AS "fileUrl", options, webhook,
  reserved_credits AS "reservedCredits", credit_usage_status AS "creditUsageStatus", cost, cost_breakdown AS "costBreakdown",
  shorts_count AS "shortsCount", data, error_message AS "errorMessage", created_at AS "createdAt", completed_at AS "completedAt"`;

/** What a list item shows (job-views listItemView). */
export type JobListRow = Pick<
  JobRow,
  | 'id'
  | 'title'
  | 'description'
  | 'status'
  | 'progress'
  | 'source'
  | 'functionName'
  | 'creditUsageStatus'
  | 'cost'
  | 'costBreakdown'
  | 'shortsCount'
  | 'createdAt'
  | 'errorMessage'
>;
const JOB_LIST_COLUMNS = `id, title, description, status, progress, source, function_name AS "functionName",
  credit_usage_status AS "creditUsageStatus", cost, cost_breakdown AS "costBreakdown", shorts_count AS "shortsCount", created_at AS "createdAt",
  error_message AS "errorMessage"`;

/**
 * The contract's `fullStorage` refusal, when the organization's storage cannot take `neededBytes`
 * more: at creation nothing is known of the video, so only storage already full is refused; at
 * reservation the source's size is known, and a source that would not fit is refused before any
 * work is done for it (else a tenant a few bytes under its limit would get every analysis free).
 */
export function checkStorageRoom(plan: Plan, usedBytes: number, neededBytes = 0): void {
  const limit = PLAN_LIMITS[plan].storageBytes;
  if (usedBytes < limit && usedBytes + neededBytes <= limit) return;
  const used = toMB(usedBytes);
  const total = toMB(limit);
  const needs = neededBytes > 0 ? ` This video needs ${toMB(neededBytes)} MB.` : '';
  throw new AppError(403, 'fullStorage', `Storage is full: ${used} MB of ${total} MB used.${needs} Delete files to start new jobs.`, {
    storageInfo: { usedSize: used, totalSize: total, availableSize: Math.max(0, Math.round((total - used) * 100) / 100) },
  });
}

/** The three preconditions of job creation, in the contract's order. */
export function checkPreconditions(org: Organization, user: User | undefined, creditsNeeded: number): void {
  checkStorageRoom(org.plan, org.storageUsedBytes);
  if (org.phoneVerificationRequired && user && !user.phoneVerified) {
    throw forbidden('Verify your phone number before creating jobs', 'Phone verification required', {
      phoneNumber: user.phoneNumber ?? null,
    });
  }
  if (org.credits - org.reservedCredits < creditsNeeded) {
    throw new AppError(
      403,
      'noEnoughCredit',
      `Not enough credits: ${Math.max(0, org.credits - org.reservedCredits).toFixed(2)} available, at least ${creditsNeeded.toFixed(2)} needed`,
    );
  }
}

/** A video already in the organization's storage, analysed instead of a download (the
 *  analyze-video contract's `object` source). */
export type StoredSource = Omit<AnalyzeStoredSource, 'kind'>;

/** What the agent starts from: a stored video, a YouTube id or a URL (validateJob admits one). */
function analyzeSource(job: ValidatedJob, stored: StoredSource | undefined): AnalyzeVideoPayload['source'] {
  if (stored) return { kind: 'object', objectKey: stored.objectKey, fileId: stored.fileId, consume: stored.consume };
  if (job.youtubeVideoId) return { kind: 'youtube', videoId: job.youtubeVideoId };
  if (job.fileUrl) return { kind: 'url', url: job.fileUrl };
  throw badRequest('One of youtubeVideoId or fileUrl is required');
}

export type JobSource = 'API' | 'WEB_APP';

export async function createJob(
  db: Db,
  queue: TaskQueue,
  input: {
    org: Organization;
    user?: User;
    job: ValidatedJob;
    creditsPerDollar: number;
    source?: JobSource;
    stored?: StoredSource;
    /** Runs in the job's own transaction: a throw there leaves no job (an upload finished twice). */
    alsoInTransaction?: (c: Queryable, jobId: string) => Promise<void>;
  },
): Promise<string> {
  const { org, job, stored } = input;
  const videoSource = analyzeSource(job, stored);
  const reserve = Math.round(MINIMUM_JOB_COST * input.creditsPerDollar * 100) / 100;
  checkPreconditions(org, input.user, reserve);
  const id = newId();
  const limits = PLAN_LIMITS[org.plan];
  const picking = pickingOf(job.options, 90);
  const predefinedShorts = job.options.predefinedShorts ?? null;
  await db.tx(async (c) => {
    // An accepted job is at the contract's first stage: 5, initiating services.
    await c.query(
      `INSERT INTO jobs (id, organization_id, user_id, function_name, title, status, progress, source, youtube_video_id, file_url, options, webhook, reserved_credits)
       VALUES ($1, $2, $3, 'VideoShorts', $4, 'PROCESSING', 5, $10, $5, $6, $7, $8, $9)`,
      [
        id,
        org.id,
        input.user?.id ?? null,
        job.title,
        job.youtubeVideoId,
        job.fileUrl,
        job.options,
        job.webhook,
        reserve,
        input.source ?? 'API',
      ],
    );
    await reserveCredits(c, org.id, id, reserve);
    await queue.enqueue(c, {
      type: 'analyze-video',
      organizationId: org.id,
      subjectId: id,
      payload: {
        jobId: id,
        source: videoSource,
        predefinedShorts,
        maxDownloadBytes: limits.maxDownloadBytes,
        // The agent picks with the options as stored, never the request's own.
        ...(predefinedShorts ? { maxAutoShortSec: 90 } : { maxAutoShortSec: picking.clipLength.max, picking }),
      },
    });
    await input.alsoInTransaction?.(c, id);
  });
  return id;
}

/** The stored source video of a completed job, to analyse again (the studio's "run this short again"). */
export async function sourceOfJob(db: Queryable, organizationId: string, jobId: string): Promise<StoredSource> {
  const job = await findJob(db, organizationId, jobId);
  if (!job) throw notFound('Job not found');
  const objectKey = job.data?.source.objectKey;
  if (job.status !== JOB_STATUS.completed || !objectKey) throw badRequest('Only a completed job can be run again from its source');
  const file = (
    await db.query<{ id: string }>(`SELECT id FROM files WHERE organization_id = $1 AND object_key = $2`, [organizationId, objectKey])
  ).rows[0];
  if (!file) throw badRequest("This job's source video was deleted; start a new job from the video");
  return { objectKey, fileId: file.id, consume: false };
}

export async function findJob(db: Queryable, organizationId: string, id: string): Promise<JobRow | undefined> {
  if (!isId(id)) return undefined;
  const res = await db.query<JobRow>(
    prepared(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1 AND organization_id = $2 AND archived_at IS NULL`, [id, organizationId]),
  );
  return res.rows[0];
}

export async function listJobs(
  db: Db,
  organizationId: string,
  filter: { query?: string; status?: string; limit: number; offset: number },
): Promise<{ rows: JobListRow[]; total: number }> {
  const where = ['organization_id = $1', 'archived_at IS NULL'];
  const params: unknown[] = [organizationId];
  if (filter.query) {
    params.push(`%${filter.query.replace(/[\\%_]/g, (m) => '\\' + m)}%`);
    where.push(`title ILIKE $${params.length}`);
  }
  if (filter.status && filter.status.toLowerCase() !== 'all') {
    params.push(filter.status.toUpperCase());
    where.push(`status = $${params.length}`);
  }
  // One round trip for the page and the total; a list item never needs `data` (the transcript,
  // hundreds of kB for a long video) or the options, so they are not read.
  const rows = await db.query<JobListRow & { total: number }>(
    `SELECT ${JOB_LIST_COLUMNS}, count(*) OVER ()::int AS total FROM jobs WHERE ${where.join(' AND ')}
      ORDER BY created_at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, filter.limit, filter.offset],
  );
  // A page past the end has no row to carry the total.
  const total = rows.length
    ? rows[0]!.total
    : filter.offset > 0
      ? (await db.one<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE ${where.join(' AND ')}`, params))!.n
      : 0;
  return { rows: rows.map(({ total: _, ...row }) => row), total };
}
