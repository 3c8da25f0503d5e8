// Auto-archive (contract section 8): a job older than its organization's retention (1-180 days,
// default 90, set with `shorts-admin org set ID --retention-days N`) disappears from the API and
// every file it produced is deleted, giving exactly their bytes back to the organization's quota.
import type { Coordinator } from '../context.js';
import { deleteFileRows } from '../files/files.js';
import { taskObjectPrefix } from '../tasks/task-queue.js';
import { finishedTasksOf } from '../tasks/task-lookups.js';
import { conflict, notFound } from '../errors.js';

export const ARCHIVE_QUEUE = 'archive-expired-jobs';
const DAILY_AT = '15 3 * * *';
const BATCH = 200;

export interface ArchiveReport {
  archivedJobs: number;
  deletedFiles: number;
  freedBytes: number;
}

type Deps = Pick<Coordinator, 'db' | 'store' | 'log'>;

/**
 * Archives every job created before `now` minus its organization's retention. A job still
 * PROCESSING waits for its outcome (it would otherwise write files for an archived job); an archived
 * job that somehow still has files (a render finishing late) is swept again.
 */
export async function archiveExpiredJobs(app: Deps, now: Date): Promise<ArchiveReport> {
  const report: ArchiveReport = { archivedJobs: 0, deletedFiles: 0, freedBytes: 0 };
  const seen = new Set<string>();
  for (;;) {
    const due = (
      await app.db.query<{ id: string; organizationId: string }>(
        `SELECT j.id, j.organization_id AS "organizationId"
         FROM jobs j JOIN organizations o ON o.id = j.organization_id
        WHERE j.status <> 'PROCESSING'
          AND j.created_at < $1::timestamptz - make_interval(days => o.retention_days)
          AND (j.archived_at IS NULL OR EXISTS (SELECT 1 FROM files f WHERE f.job_id = j.id))
        ORDER BY j.created_at LIMIT $2`,
        [now, BATCH],
      )
    ).filter((j) => !seen.has(j.id));
    if (!due.length) return report;
    for (const job of due) {
      seen.add(job.id);
      const done = await archiveJob(app, job.organizationId, job.id, now);
      if (!done) continue;
      report.archivedJobs += done.newlyArchived ? 1 : 0;
      report.deletedFiles += done.files;
      report.freedBytes += done.bytes;
    }
  }
}

/**
 * A client's DELETE /api/jobs/:jobId: the job leaves the API and its files go, exactly as when it
 * is archived. Work still running would write files for a deleted job, so a PROCESSING job, or one
 * with a render queued or in progress, is refused with 409 rather than cancelled behind the
 * client's back. Another organization's job, or one already gone, is 404.
 */
export async function deleteJob(app: Deps, organizationId: string, jobId: string): Promise<{ files: number; bytes: number }> {
  const state = (
    await app.db.query<{ status: string; renderBusy: boolean }>(
      `SELECT status, EXISTS (SELECT 1 FROM renders r WHERE r.job_id = j.id AND r.status IN ('queued', 'progress')) AS "renderBusy"
       FROM jobs j WHERE id = $1 AND organization_id = $2 AND archived_at IS NULL`,
      [jobId, organizationId],
    )
  )[0];
  if (!state) throw notFound('Job not found');
  if (state.status === 'PROCESSING') throw conflict('The job is still processing: delete it once it has completed or failed');
  if (state.renderBusy) throw conflict('A render of this job is still running: delete the job once it has finished');
  const done = await archiveJob(app, organizationId, jobId, new Date(), { onlyIfLive: true });
  // Lost a race with another delete or the daily archive: the job is gone all the same.
  if (!done) throw notFound('Job not found');
  return { files: done.files, bytes: done.bytes };
}

async function archiveJob(app: Deps, organizationId: string, jobId: string, now: Date, opts: { onlyIfLive?: boolean } = {}) {
  const result = await app.db.tx(async (c) => {
    const job = (
      await c.query<{ archivedAt: Date | null }>(
        `SELECT archived_at AS "archivedAt" FROM jobs WHERE id = $1 AND organization_id = $2 AND status <> 'PROCESSING' ${opts.onlyIfLive ? 'AND archived_at IS NULL' : ''} FOR UPDATE`,
        [jobId, organizationId],
      )
    ).rows[0];
    if (!job) return undefined;
    if (!job.archivedAt) await c.query(`UPDATE jobs SET archived_at = $2, updated_at = now() WHERE id = $1`, [jobId, now]);
    const { files, bytes } = (
      await c.query<{ files: number; bytes: number }>(
        `SELECT count(*)::int AS files, coalesce(sum(size_bytes), 0)::bigint AS bytes FROM files WHERE organization_id = $1 AND job_id = $2`,
        [organizationId, jobId],
      )
    ).rows[0];
    const keys = await deleteFileRows(c, organizationId, { jobIds: [jobId] });
    // The webhook events kept for redelivery hold the job's content (its transcript, its shorts).
    await c.query(`DELETE FROM webhook_messages WHERE organization_id = $1 AND job_id = $2`, [organizationId, jobId]);
    // What the job's and its renders' tasks left in the store beyond the files (intermediates).
    const renders = (await c.query<{ id: string }>(`SELECT id FROM renders WHERE job_id = $1`, [jobId])).rows;
    const tasks = await finishedTasksOf(c, [jobId, ...renders.map((r) => r.id)]);
    return { newlyArchived: !job.archivedAt, files, bytes: Number(bytes), keys, prefixes: tasks.map(taskObjectPrefix) };
  });
  if (!result) return undefined;
  // The rows are gone and committed: an object the store fails to drop now is an orphan the
  // sweeper takes later, never a file the client still sees.
  await removeObjects(app, result.keys, result.prefixes);
  app.log.info('job archived', { jobId, organizationId, files: result.files, bytes: result.bytes });
  return result;
}

async function removeObjects(app: Deps, keys: string[], prefixes: string[]): Promise<void> {
  const fail = (key: string) => (err: unknown) => app.log.warn('archive: object not deleted, left to the sweeper', { key, err });
  for (const key of keys) await app.store.delete(key).catch(fail(key));
  for (const prefix of prefixes) {
    try {
      for await (const obj of app.store.list(prefix)) await app.store.delete(obj.key).catch(fail(obj.key));
    } catch (err) {
      fail(prefix)(err);
    }
  }
}

/** The daily pg-boss cron job (pg-boss timers are off in tests, which call archiveExpiredJobs). */
export async function startArchiveSchedule(app: Pick<Coordinator, 'boss' | 'db' | 'store' | 'log'>): Promise<void> {
  await app.boss.createQueue(ARCHIVE_QUEUE);
  await app.boss.schedule(ARCHIVE_QUEUE, DAILY_AT, {}, { tz: 'UTC' });
  // A daily job need not be picked up within seconds; a slow poll keeps the database quiet.
  await app.boss.work(ARCHIVE_QUEUE, { pollingIntervalSeconds: 60 }, async () => {
    const report = await archiveExpiredJobs(app, new Date());
    app.log.info('auto-archive finished', { ...report });
  });
}
