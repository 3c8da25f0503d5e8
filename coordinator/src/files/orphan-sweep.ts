// Objects no file row accounts for: left by a delete whose row went but whose object did not
// (archive), or by an agent upload whose task never completed. Only old ones are taken, so an
// upload whose row is about to be written is never touched.
import type { Coordinator } from '../context.js';
import { sweepOrphans } from '../storage/sweeper.js';
import { isTaskLineageUnfinished } from '../tasks/task-lookups.js';

export const SWEEP_QUEUE = 'storage-orphan-sweep';
const DAILY_AT = '45 4 * * *';
const MIN_AGE_MS = 24 * 3600_000;
const TASK_KEY = /^orgs\/[^/]+\/tasks\/([^/]+)\//;

type Deps = Pick<Coordinator, 'db' | 'store' | 'log'>;

/** A key is known when a file row names it, or when it belongs to a task that is unfinished or
 *  has an unfinished ancestor: a completed child's objects (a render's chunks, a range's words, a
 *  short's crop) are its parent's inputs until the parent is done, however long its join waits. */
async function isKnownKey(app: Deps, key: string): Promise<boolean> {
  const file = await app.db.one<{ known: number }>(
    `SELECT 1 AS known FROM files WHERE object_key = $1 OR thumbnail_key = $1 OR captions_key = $1 LIMIT 1`,
    [key],
  );
  if (file) return true;
  const task = TASK_KEY.exec(key)?.[1];
  return task !== undefined && (await isTaskLineageUnfinished(app.db, task));
}

export async function sweepStorage(app: Deps, now = new Date()) {
  const report = await sweepOrphans(app.store, 'orgs/', (key) => isKnownKey(app, key), { olderThan: new Date(now.getTime() - MIN_AGE_MS) });
  if (report.deleted) app.log.info('orphaned objects removed', report);
  return report;
}

export async function startOrphanSweepSchedule(app: Pick<Coordinator, 'boss' | 'db' | 'store' | 'log'>): Promise<void> {
  await app.boss.createQueue(SWEEP_QUEUE);
  await app.boss.schedule(SWEEP_QUEUE, DAILY_AT, {}, { tz: 'UTC' });
  // A daily job need not be picked up within seconds; a slow poll keeps the database quiet.
  await app.boss.work(SWEEP_QUEUE, { pollingIntervalSeconds: 60 }, async () => {
    await sweepStorage(app);
  });
}
