// An agent's upload URL is good for one object of its task while the lease it was signed under
// lasts, up to that object's size limit, and once. Bytes arrive under a staging key and are moved
// into place only while the lease is still live, holding the task's row: a completion (which locks
// the row to commit the result) cannot slip between the check and the move. So once a task has
// finished, failed, been cancelled or re-leased, its objects cannot change through an old URL.
// The move is recorded (task_upload_writes) in the same transaction, so an object written under a
// lease is final: a second PUT for it is refused (409) whatever URL of that lease it comes by. A PUT
// that broke off or was refused part-way recorded nothing and may be tried again; the agent itself
// fails such a task as retryable, and its next lease signs new URLs.
import { createHash } from 'node:crypto';
import type { Db } from '../db/db.js';
import { AppError } from '../errors.js';
import { TASK_STATES, type TaskType } from '@shorts/common/tasks';
import type { ObjectStore } from '../storage/object-store.js';
import type { UploadGrant } from '../storage/signed-url.js';
import type { TaskRow } from '../tasks/task-queue.js';
import { leaseOf, lockedLeaseOf, type TaskLease } from '../tasks/task-lookups.js';

/** Names a lease in a URL without revealing its token (which authorises every call of the task). */
export const leaseTag = (leaseToken: string) => createHash('sha256').update(`upload-lease\n${leaseToken}`).digest('base64url').slice(0, 22);

/** A thumbnail is a JPEG or PNG of at most 2048 px a side. */
const THUMBNAIL_MAX_BYTES = 20_000_000;

/**
 * The most bytes a task may store under one name: a source at most what the agent was allowed to
 * download (or the stored object it was given), a thumbnail 20 MB, any other video `maxVideoBytes`.
 */
export async function taskUploadLimit(
  store: Pick<ObjectStore, 'stat'>,
  task: Pick<TaskRow, 'type' | 'payload'>,
  name: string,
  maxVideoBytes: number,
): Promise<number> {
  if (/\.(jpg|png)$/.test(name)) return THUMBNAIL_MAX_BYTES;
  if (task.type === ('analyze-video' satisfies TaskType) && name.startsWith('source.')) {
    const payload = task.payload as { maxDownloadBytes?: number; source?: { kind?: string; objectKey?: string } };
    let limit = payload.maxDownloadBytes ?? maxVideoBytes;
    if (payload.source?.kind === 'object' && payload.source.objectKey) {
      limit = Math.max(limit, (await store.stat(payload.source.objectKey))?.size ?? 0);
    }
    return limit;
  }
  return maxVideoBytes;
}

const gone = (message: string) => new AppError(410, 'Gone', message);
const written = () =>
  new AppError(
    409,
    'Conflict',
    'This object was already written through an upload URL of this lease; an upload URL writes once, and the stored object is unchanged',
  );

export interface UploadGate {
  /** Refuses an upload whose lease is no longer live (410) or whose object that lease already
   *  wrote (409), before any byte is read. */
  check(grant: UploadGrant, key: string): Promise<void>;
  /** Runs `publish` (the move into place) only while the lease is live, the task's row held, and
   *  only for the first upload of `key` under it; the write is recorded only if `publish` succeeds. */
  publish(grant: UploadGrant, key: string, sizeBytes: number, publish: () => Promise<void>): Promise<void>;
}

export function createUploadGate(db: Db): UploadGate {
  const assertLive = (row: TaskLease | undefined, grant: UploadGrant) => {
    if (!row) throw gone('The task this upload URL was signed for no longer exists');
    if (row.state === TASK_STATES.completed)
      throw gone('The task this upload URL was signed for has completed; its results can no longer be replaced');
    if (row.state !== TASK_STATES.leased)
      throw gone(
        `The task this upload URL was signed for has ${row.state === TASK_STATES.queued ? 'gone back to the queue' : 'ended'}; this URL is no longer valid`,
      );
    if (!row.leaseToken || leaseTag(row.leaseToken) !== grant.lease)
      throw gone('The task was leased again since this upload URL was signed; only its current lease may upload');
  };
  return {
    async check(grant, key) {
      assertLive(await leaseOf(db, grant.taskId), grant);
      const done = await db.one<{ n: number }>(
        `SELECT 1 AS n FROM task_upload_writes WHERE task_id = $1 AND lease = $2 AND object_key = $3`,
        [grant.taskId, grant.lease, key],
      );
      if (done) throw written();
    },
    async publish(grant, key, sizeBytes, publish) {
      await db.tx(async (c) => {
        assertLive(await lockedLeaseOf(c, grant.taskId), grant);
        // Two PUTs racing to the end: the second waits here for the first to commit, then finds its row.
        const first = await c.query(
          `INSERT INTO task_upload_writes (task_id, lease, object_key, size_bytes) VALUES ($1, $2, $3, $4)
           ON CONFLICT (task_id, lease, object_key) DO NOTHING RETURNING 1`,
          [grant.taskId, grant.lease, key, sizeBytes],
        );
        if (!first.rowCount) throw written();
        await publish();
      });
    },
  };
}
