import type { ObjectUrls } from '../storage/urls.js';
import { JOB_STATUS, type JobData, type JobListRow, type JobRow, type StoredShort } from './jobs.js';
import type { Reframe, ShortDetections } from '@shorts/common/reframe/types';
import { captionBandFor } from '@shorts/common/reframe/caption-band';
import { ANALYZE_STAGES, type AnalyzeStage } from '@shorts/common/tasks/analyze-video';

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

const withStage = (view: Record<string, unknown>, job: Pick<JobRow, 'status' | 'progress'>, waiting: string | undefined) => {
  const stage = jobStage(job, waiting);
  return stage ? { ...view, stage } : view;
};

export function apiKeyView(job: JobRow, waiting?: string): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: job.id,
    title: job.title,
    cost: completed(job) ? job.cost : null,
    costBreakDown: completed(job) ? job.costBreakdown : null,
    status: job.status,
    source: job.source,
    progress: job.progress,
  };
  if (job.status === JOB_STATUS.failed) view.message = job.errorMessage;
  if (completed(job)) {
    view.data = {
      shorts: liveShorts(job.data).map((s) => ({
        id: String(s.id),
        content: s.title,
        text: s.text,
        startTime: s.startTime,
        endTime: s.endTime,
        reframe: s.reframe ?? null,
        ...(s.reframeStale ? { reframeStale: true } : {}),
      })),
      ...(job.data?.notes?.length ? { notes: job.data.notes } : {}),
    };
  }
  return withStage(view, job, waiting);
}

export async function bearerView(job: JobRow, urls: ObjectUrls, waiting?: string): Promise<Record<string, unknown>> {
  const view: Record<string, unknown> = {
    jobId: job.id,
    title: job.title,
    status: job.status,
    progress: job.progress,
    createdAt: new Date(job.createdAt).toISOString(),
  };
  if (job.status === JOB_STATUS.failed) view.message = job.errorMessage;
  if (completed(job)) {
    view.cost = job.cost;
    view.costBreakDown = job.costBreakdown;
    view.data = {
      transcription: job.data?.transcription ? { ...job.data.transcription, revision: job.data.transcription.revision ?? 0 } : null,
      shortsRevision: job.data?.shortsRevision ?? 0,
      shorts: await Promise.all(
        liveShorts(job.data).map(async (s) => ({
          id: s.id,
          title: s.title,
          ...(s.reason ? { reason: s.reason } : {}),
          startId: s.startId,
          endId: s.endId,
          startTime: s.startTime,
          endTime: s.endTime,
          text: s.text,
          cropFileUrl: s.cropObjectKey ? (await urls.sign(s.cropObjectKey, 'GET')).url : null,
          reframe: s.reframe ?? null,
          ...(s.reframeStale ? { reframeStale: true } : {}),
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

export function listItemView(job: JobListRow, waiting?: string): Record<string, unknown> {
  // A failed job's reason, as in the retrieve forms, so a list can say why without a request per job.
  const reason = job.status === JOB_STATUS.failed ? { message: job.errorMessage } : {};
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
