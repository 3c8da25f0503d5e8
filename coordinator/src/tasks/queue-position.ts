import type { Db } from '../db/db.js';
import type { TaskType } from '@shorts/common/tasks';

// Where a subject's (job's, render's) queued work stands: what the API shows while it waits.

/** Why the work for each subject waits, when no connected agent can take it (subjects absent: it does not). */
export async function waitingReasons(db: Db, subjectIds: string[]): Promise<Map<string, string>> {
  if (subjectIds.length === 0) return new Map();
  const rows = await db.query<{ subjectId: string; reason: string }>(
    `SELECT DISTINCT ON (subject_id) subject_id AS "subjectId", waiting_reason AS reason FROM tasks
     WHERE subject_id = ANY($1::text[]) AND state = 'queued' AND waiting_reason IS NOT NULL
     ORDER BY subject_id, created_at DESC`,
    [subjectIds],
  );
  return new Map(rows.map((r) => [r.subjectId, r.reason]));
}

/**
 * How many queued tasks of the type will be leased before the subject's own (0: it is next), under
 * the lease query's fair ordering: the tasks ahead of it in its own organization, plus, from every
 * other organization, those at earlier places in its own line, and the one at the same place when
 * that organization's turn comes first (fewer running tasks, or served less recently). An estimate
 * where placement by capability reorders work; undefined when the subject has no queued task.
 */
export async function tasksAhead(db: Db, subjectId: string, type: TaskType): Promise<number | undefined> {
  const row = await db.one<{ ahead: number | null }>(
    `WITH waiting AS (
       SELECT t.id, t.organization_id AS org, t.queued_at,
              row_number() OVER (PARTITION BY t.organization_id ORDER BY t.priority DESC, t.queued_at, t.id) AS place
       FROM tasks t WHERE t.type = $2 AND t.state = 'queued' AND NOT t.cancel_requested
     ),
     mine AS (
       SELECT w.* FROM waiting w JOIN tasks t ON t.id = w.id WHERE t.subject_id = $1 ORDER BY w.queued_at DESC LIMIT 1
     ),
     turns AS (
       SELECT o.org,
              (SELECT count(*) FROM tasks r WHERE r.state = 'leased' AND r.organization_id = o.org) AS running,
              COALESCE((SELECT max(l.started_at) FROM tasks l WHERE l.organization_id = o.org), '-infinity'::timestamptz) AS served_at
       FROM (SELECT DISTINCT org FROM waiting) o
     )
     SELECT (mine.place - 1 + (
              SELECT count(*) FROM waiting w JOIN turns o ON o.org = w.org
              WHERE w.org IS DISTINCT FROM mine.org
                AND (w.place < mine.place
                     OR (w.place = mine.place AND (o.running, o.served_at, w.queued_at, w.id) < (me.running, me.served_at, mine.queued_at, mine.id)))
            ))::int AS ahead
     FROM mine JOIN turns me ON me.org IS NOT DISTINCT FROM mine.org`,
    [subjectId, type],
  );
  return row?.ahead ?? undefined;
}
