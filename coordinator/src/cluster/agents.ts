import type { Db } from '../db/db.js';
import { AppError, notFound } from '../errors.js';
import { isId } from '../ids.js';

// The agents table as operators see it: who is online, draining or offline, and what each does.

export interface AgentView {
  id: string;
  name: string;
  state: 'online' | 'draining' | 'offline';
  taskTypes: string[];
  capabilities: string[];
  slots: number;
  /** Tasks the coordinator has leased to the agent now. */
  runningTasks: number;
  /** Tasks the agent said it runs in its last heartbeat. More than runningTasks: attempts whose lease
   *  was taken back still winding down (or an agent that does not stop work it lost). */
  reportedRunningTasks: number;
  freeDiskBytes: number | null;
  lastSeenAt: Date;
  registeredAt: Date;
  drainRequestedAt: Date | null;
}

const AGENT_COLUMNS = `a.id, a.name, a.state, a.task_types AS "taskTypes", a.capability_tags AS capabilities, a.max_slots AS slots,
  (SELECT count(*)::int FROM tasks t WHERE t.state = 'leased' AND t.leased_by = a.id) AS "runningTasks",
  a.running_tasks AS "reportedRunningTasks",
  a.free_disk_bytes AS "freeDiskBytes", a.last_seen_at AS "lastSeenAt", a.registered_at AS "registeredAt",
  a.drain_requested_at AS "drainRequestedAt"`;

/** Online and draining agents, and those gone offline in the last day (all of them with `all`). */
export async function listAgents(db: Db, opts: { all?: boolean } = {}): Promise<AgentView[]> {
  return db.query<AgentView>(
    `SELECT ${AGENT_COLUMNS} FROM agents a
     WHERE $1 OR a.state <> 'offline' OR a.last_seen_at > now() - interval '1 day'
     ORDER BY a.state = 'offline', a.name, a.registered_at DESC`,
    [opts.all ?? false],
  );
}

/** Draining: the agent finishes what it runs and leases nothing new; it learns so on its next
 *  heartbeat or lease call. `resume` lifts the drain. */
export async function setDraining(db: Db, id: string, draining: boolean): Promise<AgentView> {
  if (!isId(id)) throw notFound(`Agent ${id} not found`);
  const row = await db.one<{ state: string }>(
    `UPDATE agents SET
       drain_requested_at = CASE WHEN $2 THEN COALESCE(drain_requested_at, now()) ELSE NULL END,
       state = CASE WHEN state = 'offline' THEN 'offline' WHEN $2 THEN 'draining' ELSE 'online' END
     WHERE id = $1 RETURNING state`,
    [id, draining],
  );
  if (!row) throw notFound(`Agent ${id} not found`);
  const [view] = await db.query<AgentView>(`SELECT ${AGENT_COLUMNS} FROM agents a WHERE a.id = $1`, [id]);
  return view!;
}

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
