import type { ObjectUrls } from '../storage/urls.js';
import { JOB_STATUS, type JobData, type JobListRow, type JobRow, type StoredShort } from './jobs.js';
import type { Reframe, ShortDetections } from '@shorts/common/reframe/types';
import { captionBandFor } from '@shorts/common/reframe/caption-band';
import { ANALYZE_STAGES, type AnalyzeStage } from '@shorts/common/tasks/analyze-video';
import { titleSourceOf } from './transcript-edits.js';
import type { ApiKeyJob, BearerJob, JobListItem } from '@shorts/common/api/jobs';

// The contract's three shapes of a job: API-key retrieve (2.3), bearer retrieve (2.4), list item (2.5).

/** A short's stored captionBand: kept only where it is not the lower third, and only for a path
 *  planned for a known output shape. */
export function bandOf(
  reframe: Reframe | null | undefined,
  detections: ShortDetections | null | undefined,
  output: { width: number; height: number } | undefined,
): Pick<StoredShort, 'captionBand'> {
  if (!output) return {};
  const band = captionBandFor(reframe, detections, output);
  return band === 'bottom' ? {} : { captionBand: band };
}

/** The shorts a client sees: removed ones keep their place in jobs.data only. */
export const liveShorts = (data: Pick<JobData, 'shorts'> | null | undefined): StoredShort[] =>
  (data?.shorts ?? []).filter((s) => !s.removed);

const completed = (job: Pick<JobRow, 'status'>) => job.status === JOB_STATUS.completed;

/** The contract's words for each analysis stage (section 2.3: "30 transcribing", ...). A Record, so
 *  a stage added to the task's contract does not compile until it has its words here. */
const STAGE_WORDS: Record<AnalyzeStage, string> = {
  initiating: 'initiating services',
  downloading: 'downloading video',
  transcribing: 'transcribing',
  generating_shorts: 'generating shorts',
  detecting_speakers: 'active speaker detection',
};
const STAGES_BY_PROGRESS = (Object.keys(STAGE_WORDS) as AnalyzeStage[])
  .map((stage) => ({ progress: ANALYZE_STAGES[stage].jobProgress, words: STAGE_WORDS[stage] }))
  .sort((a, b) => a.progress - b.progress);

/**
 * What a PROCESSING job is doing, in words (the field `stage`, beyond the contract): why it waits
 * when no connected agent can take its work, else the contract's name for its progress value.
 * Absent once the job is COMPLETED or FAILED, where `status` says it all.
 */
export function jobStage(job: Pick<JobRow, 'status' | 'progress'>, waiting: string | undefined): string | undefined {
  if (job.status !== JOB_STATUS.processing) return undefined;
  if (waiting) return waiting;
  let words = STAGES_BY_PROGRESS[0]!.words;
  for (const s of STAGES_BY_PROGRESS) if (job.progress >= s.progress) words = s.words;
  return words;
}

const withStage = <View extends object>(view: View, job: Pick<JobRow, 'status' | 'progress'>, waiting: string | undefined) => {
  const stage = jobStage(job, waiting);
  return stage ? { ...view, stage } : view;
};

/** A FAILED job's reason (the outcome handler writes it with the status: never null on a FAILED row). */
const failure = (job: Pick<JobRow, 'status' | 'errorMessage'>): { message?: string } =>
  job.status === JOB_STATUS.failed ? { message: job.errorMessage ?? undefined } : {};

/** A picked short's score and its parts (score.ts in the agent); absent for the client's own times. */
function scoreFields(s: StoredShort): { score?: number; scores?: NonNullable<StoredShort['scores']>; reason?: string } {
  return s.score !== undefined && s.scores ? { score: s.score, scores: s.scores, ...(s.reason ? { reason: s.reason } : {}) } : {};
}

/**
 * The bearer form lists the shorts best first (issue 40): scored ones by score, then the rest (the
 * client's own, added ones) by id. Ids keep following start time, so a client can still sort by them.
 */
export function bestFirst(shorts: StoredShort[]): StoredShort[] {
  return [...shorts].sort((a, b) => (b.score ?? -1) - (a.score ?? -1) || a.id - b.id);
}

export function apiKeyView(job: JobRow, waiting?: string): ApiKeyJob {
  const view: ApiKeyJob = {
    id: job.id,
    title: job.title,
    cost: completed(job) ? job.cost : null,
    costBreakDown: completed(job) ? job.costBreakdown : null,
    status: job.status,
    source: job.source,
    progress: job.progress,
    ...failure(job),
  };
  if (completed(job)) {
    view.data = {
      // Beyond the contract's API-key form: the revision the short edits name, which a key could not read otherwise.
      shortsRevision: job.data?.shortsRevision ?? 0,
      shorts: liveShorts(job.data).map((s) => ({
        id: String(s.id),
        content: s.title,
        // Beyond the contract, as in the bearer form: whether the title follows the words or was typed.
        titleSource: titleSourceOf(s, job.data?.transcription?.words ?? []),
        text: s.text,
        startTime: s.startTime,
        endTime: s.endTime,
        // Beyond the contract's API-key form, as in the bearer form: why the picker chose it.
        ...scoreFields(s),
        reframe: s.reframe ?? null,
        ...(s.reframeStale ? { reframeStale: true as const } : {}),
      })),
      ...(job.data?.notes?.length ? { notes: job.data.notes } : {}),
    };
  }
  return withStage(view, job, waiting);
}

export async function bearerView(job: JobRow, urls: ObjectUrls, waiting?: string): Promise<BearerJob> {
  const view: BearerJob = {
    jobId: job.id,
    title: job.title,
    status: job.status,
    progress: job.progress,
    createdAt: new Date(job.createdAt).toISOString(),
    ...failure(job),
  };
  if (completed(job)) {
    view.cost = job.cost;
    view.costBreakDown = job.costBreakdown;
    view.data = {
      transcription: job.data?.transcription ? { ...job.data.transcription, revision: job.data.transcription.revision ?? 0 } : null,
      shortsRevision: job.data?.shortsRevision ?? 0,
      shorts: await Promise.all(
        bestFirst(liveShorts(job.data)).map(async (s) => ({
          id: s.id,
          title: s.title,
          // Beyond the contract: whether the title is made from the words (and follows their corrections) or typed.
          titleSource: titleSourceOf(s, job.data?.transcription?.words ?? []),
          ...(s.reason ? { reason: s.reason } : {}),
          ...scoreFields(s),
          startId: s.startId,
          endId: s.endId,
          startTime: s.startTime,
          endTime: s.endTime,
          text: s.text,
          cropFileUrl: s.cropObjectKey ? (await urls.sign(s.cropObjectKey, 'GET')).url : null,
          reframe: s.reframe ?? null,
          ...(s.reframeStale ? { reframeStale: true as const } : {}),
          // Beyond the contract: the band captions take when a render names none (away from the face).
          captionBand: s.captionBand ?? 'bottom',
        })),
      ),
      // Beyond the contract: the analysed video itself, for players such as the web studio's.
      ...(job.data?.source?.objectKey
        ? {
            source: {
              url: (await urls.sign(job.data.source.objectKey, 'GET')).url,
              width: job.data.source.width ?? null,
              height: job.data.source.height ?? null,
              fps: job.data.source.fps ?? null,
            },
          }
        : {}),
      ...(job.data?.notes?.length ? { notes: job.data.notes } : {}),
    };
  }
  return withStage(view, job, waiting);
}

export function listItemView(job: JobListRow, waiting?: string): JobListItem {
  // A failed job's reason, as in the retrieve forms, so a list can say why without a request per job.
  const reason = failure(job);
  return withStage(
    {
      id: job.id,
      title: job.title,
      description: job.description,
      cost: completed(job) ? job.cost : null,
      costBreakDown: completed(job) ? job.costBreakdown : null,
      creditUsageStatus: job.creditUsageStatus,
      status: job.status,
      functionName: job.functionName,
      source: job.source,
      createdAt: new Date(job.createdAt).toISOString(),
      progress: job.progress,
      shortsCount: completed(job) ? job.shortsCount : 0,
      ...reason,
    },
    job,
    waiting,
  );
}
