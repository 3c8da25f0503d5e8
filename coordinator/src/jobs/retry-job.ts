import { badRequest, conflict, notFound } from '../errors.js';
import type { Queryable } from '../db/db.js';
import type { CreateJobBody } from './job-input.js';
import { findJob, JOB_STATUS, sourceOfJob, type StoredSource } from './jobs.js';

/**
 * What a new job from the same source and options as `jobId` is created from: the same YouTube id
 * or URL (fetched again, under today's URL rules), or the stored video of a completed upload. An
 * uploaded video is consumed when its job fails, so such a job cannot be retried without the file.
 */
export async function retryRequest(
  db: Queryable,
  organizationId: string,
  jobId: string,
): Promise<{ body: CreateJobBody; stored?: StoredSource }> {
  const job = await findJob(db, organizationId, jobId);
  if (!job) throw notFound('Job not found');
  if (job.status === JOB_STATUS.processing) throw conflict('The job is still processing: retry it once it has completed or failed');
  const common = { functionName: 'VideoShorts', name: job.title, webhook: job.webhook, options: job.options };
  if (job.youtubeVideoId) return { body: { ...common, youtubeVideoId: job.youtubeVideoId } };
  if (job.fileUrl) return { body: { ...common, fileUrl: job.fileUrl } };
  if (job.status !== JOB_STATUS.completed) throw badRequest('The uploaded video was not kept after the job failed: upload the file again');
  return { body: { ...common, sourceJobId: job.id }, stored: await sourceOfJob(db, organizationId, job.id) };
}
