import type { Db, Queryable } from '../db/db.js';
import type { TaskRow } from './task-row.js';

// What other parts of the coordinator may read of the queue's rows, asked here so that every
// statement on `tasks` stays in this folder (scripts/queue-table.mjs checks it): a parent's children
// (fan-in checks each child's objects), which tasks' objects are still needed (the storage sweeper,
// the archive), the lease an upload URL was signed under, and how fast agents rendered their chunks.

/** A task as far as its objects go: where they lie (taskObjectPrefix) and what its type may write. */
export type TaskRef = Pick<TaskRow, 'id' | 'organizationId' | 'type'>;

/** A parent's children, in child order; only those of `type` when given (one round of several). */
export async function childrenOf(q: Queryable, parentId: string, type?: TaskRow['type']): Promise<TaskRef[]> {
  return (
    await q.query<TaskRef>(
      `SELECT id, organization_id AS "organizationId", type FROM tasks WHERE parent_id = $1 AND ($2::text IS NULL OR type = $2) ORDER BY child_index`,
      [parentId, type ?? null],
    )
  ).rows;
}

/** Whether a task, or any task above it, is unfinished (queued, leased or waiting on children): a
 *  completed child's objects are its parent's inputs until the parent is done. */
export async function isTaskLineageUnfinished(db: Db, taskId: string): Promise<boolean> {
  const row = await db.one<{ unfinished: number }>(
    `WITH RECURSIVE family AS (
       SELECT id, parent_id, state FROM tasks WHERE id = $1
       UNION ALL SELECT p.id, p.parent_id, p.state FROM tasks p JOIN family f ON p.id = f.parent_id
     )
     SELECT 1 AS unfinished FROM family WHERE state IN ('queued', 'leased', 'waiting') LIMIT 1`,
    [taskId],
  );
  return !!row;
}

/** The finished tasks (completed, failed or cancelled) that worked for any of these subjects (a
 *  job, its renders): what they left in the store may go with them. */
export async function finishedTasksOf(q: Queryable, subjectIds: readonly string[]): Promise<Array<Pick<TaskRow, 'id' | 'organizationId'>>> {
  return (
    await q.query<Pick<TaskRow, 'id' | 'organizationId'>>(
      `SELECT id, organization_id AS "organizationId" FROM tasks
        WHERE state NOT IN ('queued', 'leased', 'waiting') AND subject_id = ANY($1::text[])`,
      [subjectIds],
    )
  ).rows;
}

/** A task's state and current lease token (undefined: no such task). */
export type TaskLease = Pick<TaskRow, 'state' | 'leaseToken'>;

export function leaseOf(db: Db, taskId: string): Promise<TaskLease | undefined> {
  return db.one<TaskLease>(`SELECT state, lease_token AS "leaseToken" FROM tasks WHERE id = $1`, [taskId]);
}

/** The same, holding the task's row until the transaction ends: a completion (which locks the row
 *  to commit its result) waits, so the lease cannot end while the caller acts under it. */
export async function lockedLeaseOf(c: Queryable, taskId: string): Promise<TaskLease | undefined> {
  return (await c.query<TaskLease>(`SELECT state, lease_token AS "leaseToken" FROM tasks WHERE id = $1 FOR SHARE`, [taskId])).rows[0];
}

/** Each agent's median pace over its latest `recent` completed render chunks of the last day with
 *  `encoder` (output pixels a second: the chunk's encode fps times its frame's size), for agents with
 *  `atLeast` such chunks (renders/render-speeds.ts). */
export async function chunkPaceByAgent(
  db: Db,
  agentIds: readonly string[],
  encoder: string,
  o: { recent: number; atLeast: number },
): Promise<Map<string, number>> {
  if (!agentIds.length) return new Map();
  const rows = await db.query<{ agentId: string; pixelsPerSec: number }>(
    `SELECT agent AS "agentId", percentile_cont(0.5) WITHIN GROUP (ORDER BY rate) AS "pixelsPerSec"
       FROM (SELECT leased_by AS agent,
                    (result->>'encodeFps')::float8 * (payload->'output'->>'width')::float8 * (payload->'output'->>'height')::float8 AS rate,
                    row_number() OVER (PARTITION BY leased_by ORDER BY finished_at DESC) AS recent
               FROM tasks
              WHERE type = 'render-chunk' AND state = 'completed' AND leased_by = ANY($1::text[])
                AND payload->'chunk'->>'encoder' = $2 AND (result->>'encodeFps')::float8 > 0
                AND finished_at > now() - interval '1 day') chunks
      WHERE recent <= $3
      GROUP BY agent
     HAVING count(*) >= $4`,
    [agentIds, encoder, o.recent, o.atLeast],
  );
  return new Map(rows.map((r) => [r.agentId, r.pixelsPerSec]));
}
