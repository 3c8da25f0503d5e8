import type { Db } from '../db/db.js';
import { AppError, notFound } from '../errors.js';
import { isId } from '../ids.js';

// The queue as operators see and steer it (the admin CLI, the farm's numbers): a task and its
// children, a cancel by hand, and how much work waits of each type.

export interface CancelRequest {
  taskId: string;
  type: string;
  state: string;
  outcome: 'cancel requested' | 'already finished';
}

/**
 * Asks for a task to be cancelled, by task id or by the job or render it works for. The coordinator
 * carries it out: a queued task is finished as cancelled on its next watchdog tick (its job or render
 * fails with "Cancelled"), a running one's agent stops on its next progress report.
 */
export async function requestTaskCancel(db: Db, id: string): Promise<CancelRequest[]> {
  if (!isId(id)) throw notFound(`No task, job or render ${id}`);
  const tasks = await db.query<{ taskId: string; type: string; state: string }>(
    // A parent task's children are part of it (a waiting parent ends when a child is cancelled).
    `SELECT id AS "taskId", type, state FROM tasks WHERE id = $1 OR subject_id = $1 OR parent_id = $1 ORDER BY created_at`,
    [id],
  );
  if (!tasks.length) throw notFound(`No task, job or render ${id}`);
  const out: CancelRequest[] = [];
  for (const t of tasks) {
    const updated = await db.one<{ state: string }>(
      `UPDATE tasks SET cancel_requested = true WHERE id = $1 AND state IN ('queued', 'leased') RETURNING state`,
      [t.taskId],
    );
    out.push({ ...t, state: updated?.state ?? t.state, outcome: updated ? 'cancel requested' : 'already finished' });
  }
  if (out.every((t) => t.outcome === 'already finished')) {
    throw new AppError(409, 'Conflict', `Nothing to cancel: ${out.map((t) => `task ${t.taskId} is ${t.state}`).join(', ')}`);
  }
  return out;
}

export interface TaskView {
  id: string;
  type: string;
  state: string;
  /** The task's place among its parent's children (fan-out); null for a task of its own. */
  childIndex: number | null;
  attempts: number;
  progress: number;
  stage: string | null;
  /** The agent holding it now, by name. */
  agent: string | null;
  lastError: string | null;
}

const TASK_VIEW = `t.id, t.type, t.state, t.child_index AS "childIndex", t.attempts, t.progress, t.stage,
  (SELECT a.name FROM agents a WHERE a.id = t.leased_by AND t.state = 'leased') AS agent, t.last_error AS "lastError"`;

/** A task (by task id, or the first task of a job or render) and its child tasks, in their order. */
export async function showTask(db: Db, id: string): Promise<{ task: TaskView; children: TaskView[] }> {
  if (!isId(id)) throw notFound(`No task, job or render ${id}`);
  const [task] = await db.query<TaskView>(
    `SELECT ${TASK_VIEW} FROM tasks t WHERE (t.id = $1 OR t.subject_id = $1) AND t.parent_id IS NULL ORDER BY t.id = $1 DESC, t.created_at LIMIT 1`,
    [id],
  );
  if (!task) throw notFound(`No task, job or render ${id}`);
  const children = await db.query<TaskView>(`SELECT ${TASK_VIEW} FROM tasks t WHERE t.parent_id = $1 ORDER BY t.child_index`, [task.id]);
  return { task, children };
}

/** Tasks of one type not yet finished: queued, leased and waiting on children, and how long the
 *  oldest queued one has waited. Types with none are absent. */
export interface QueueDepth {
  type: string;
  queued: number;
  leased: number;
  waiting: number;
  oldestQueuedSec: number;
}

export function queueDepthByType(db: Db): Promise<QueueDepth[]> {
  return db.query<QueueDepth>(
    `SELECT type,
            count(*) FILTER (WHERE state = 'queued')::int AS queued,
            count(*) FILTER (WHERE state = 'leased')::int AS leased,
            count(*) FILTER (WHERE state = 'waiting')::int AS waiting,
            COALESCE(EXTRACT(EPOCH FROM now() - min(queued_at) FILTER (WHERE state = 'queued')), 0)::float8 AS "oldestQueuedSec"
       FROM tasks WHERE state IN ('queued', 'leased', 'waiting') GROUP BY type`,
  );
}
