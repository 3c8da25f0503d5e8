import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { Db, Queryable } from '../db/db.js';
import { AppError } from '../../../common/src/errors.js';
import { newId, randomToken } from '../../../common/src/ids.js';
import type { Logger } from '../../../common/src/logger.js';
import type { TaskType } from '../../../common/src/tasks.js';
import type { Metrics } from '../metrics/metrics.js';

export interface TaskRow {
  id: string;
  type: TaskType;
  organizationId: string | null;
  subjectId: string | null;
  payload: Record<string, unknown>;
  state: string;
  attempts: number;
  maxAttempts: number;
  leaseToken: string | null;
  leasedBy: string | null;
  leaseExpiresAt: Date | null;
  progress: number;
  stage: string | null;
  result: unknown;
  lastError: string | null;
  cancelRequested: boolean;
  queuedAt: Date;
  startedAt: Date | null;
}

const TASK_COLUMNS = `id, type, organization_id AS "organizationId", subject_id AS "subjectId", payload, state, attempts,
  max_attempts AS "maxAttempts", lease_token AS "leaseToken", leased_by AS "leasedBy", lease_expires_at AS "leaseExpiresAt",
  progress, stage, result, last_error AS "lastError", cancel_requested AS "cancelRequested", queued_at AS "queuedAt",
  started_at AS "startedAt"`;

/** What a domain (jobs, renders, probes) does when one of its tasks moves. Runs inside the task's
 *  transaction, so the domain's rows and the task's state change together or not at all. */
export interface TaskOutcomeHandler {
  /** Throwing an AppError refuses the task for good with its message (the agent is told to cancel). */
  onProgress?(c: Queryable, task: TaskRow, progress: number, stage: string | null, facts?: Record<string, unknown>): Promise<void>;
  onComplete(c: Queryable, task: TaskRow, result: Record<string, unknown>): Promise<void>;
  /** The task failed for good (bad input, or too many lost leases). */
  onFailed(c: Queryable, task: TaskRow, reason: string, code: string): Promise<void>;
  /** Adds what must be fresh when an agent takes the task (signed URLs) to the stored payload. */
  prepareLease?(task: TaskRow): Promise<Record<string, unknown>>;
  /** Runs after the transaction committed (webhooks, notifications). */
  afterFinish?(task: TaskRow, outcome: 'completed' | 'failed'): Promise<void>;
}

export const LEASE_LOST = 'lease_lost';
const leaseLost = (id: string) => new AppError(409, LEASE_LOST, `Task ${id} is no longer leased with this token`);
const NOTIFY_CHANNEL = 'shorts_tasks';

export interface EnqueueInput {
  type: TaskType;
  organizationId?: string | null;
  subjectId?: string | null;
  payload: Record<string, unknown>;
  priority?: number;
  maxAttempts?: number;
}

export class TaskQueue {
  private readonly wakeups = new EventEmitter();
  private listener?: pg.Client;
  private handlers = new Map<TaskType, TaskOutcomeHandler>();

  constructor(
    private readonly db: Db,
    private readonly opts: { leaseTtlMs: number; maxAttempts: number },
    private readonly log: Logger,
    private readonly metrics: Metrics,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.wakeups.setMaxListeners(0);
  }

  registerHandler(type: TaskType, handler: TaskOutcomeHandler): void {
    if (this.handlers.has(type)) throw new Error(`duplicate task handler for ${type}`);
    this.handlers.set(type, handler);
  }

  /** Checks at start-up that every task type that can be enqueued has an owner. */
  assertHandlers(types: readonly TaskType[]): void {
    const missing = types.filter((t) => !this.handlers.has(t));
    if (missing.length) throw new Error(`no task handler registered for: ${missing.join(', ')}`);
  }

  private handler(type: TaskType): TaskOutcomeHandler {
    const h = this.handlers.get(type);
    if (!h) throw new Error(`no task handler for ${type}`);
    return h;
  }

  private stopped = false;

  /** LISTEN so that enqueues by any coordinator wake this one's waiting agents at once. If the
   *  connection drops, long-polls still end on their timeout while it reconnects. */
  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.db.url });
    client.on('error', (err) => {
      if (this.stopped) return;
      this.log.warn('task listener lost its connection; reconnecting', { err: err.message });
      client.end().catch(() => undefined);
      this.reconnectListener();
    });
    await client.connect();
    client.on('notification', () => this.wakeups.emit('task'));
    await client.query(`LISTEN ${NOTIFY_CHANNEL}`);
    this.listener = client;
    // Anything enqueued while we were not listening.
    this.wakeups.emit('task');
  }

  private reconnectListener(): void {
    setTimeout(() => {
      if (this.stopped) return;
      this.start().catch((err) => {
        this.log.error('task listener reconnect failed', { err: err.message });
        this.reconnectListener();
      });
    }, 1000).unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeups.emit('task');
    await this.listener?.end().catch(() => undefined);
  }

  async enqueue(c: Queryable, input: EnqueueInput): Promise<string> {
    const id = newId();
    await c.query(
      `INSERT INTO tasks (id, type, organization_id, subject_id, payload, priority, max_attempts) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [id, input.type, input.organizationId ?? null, input.subjectId ?? null, input.payload, input.priority ?? 0, input.maxAttempts ?? this.opts.maxAttempts],
    );
    // Delivered at commit, so an agent never wakes for a task it cannot see yet.
    await c.query(`SELECT pg_notify('${NOTIFY_CHANNEL}', $1)`, [input.type]);
    return id;
  }

  /** The payload an agent receives for a task it just leased. */
  async leasePayload(task: TaskRow): Promise<Record<string, unknown>> {
    const prepare = this.handler(task.type).prepareLease;
    return prepare ? { ...task.payload, ...(await prepare(task)) } : task.payload;
  }

  async get(id: string): Promise<TaskRow | undefined> {
    return this.db.one(`SELECT ${TASK_COLUMNS} FROM tasks WHERE id = $1`, [id]);
  }

  /** Atomically takes the oldest queued task of the given types; only one agent can win it. */
  async tryLease(agentId: string, types: readonly string[]): Promise<TaskRow | undefined> {
    const token = randomToken(24);
    const task = await this.db.one<TaskRow>(
      `UPDATE tasks SET state = 'leased', lease_token = $1, leased_by = $2,
         lease_expires_at = $4::timestamptz + make_interval(secs => $3 / 1000.0), attempts = attempts + 1,
         started_at = $4, stage = NULL
       WHERE id = (SELECT id FROM tasks WHERE state = 'queued' AND type = ANY($5)
                   ORDER BY priority DESC, queued_at, id FOR UPDATE SKIP LOCKED LIMIT 1)
       RETURNING ${TASK_COLUMNS}`,
      [token, agentId, this.opts.leaseTtlMs, this.now(), types],
    );
    if (task) {
      await this.event(task.id, agentId, 'leased', `attempt ${task.attempts}`);
      this.metrics.leaseWait.labels(task.type).observe((Date.now() - new Date(task.queuedAt).getTime()) / 1000);
      this.log.info('task leased', { taskId: task.id, type: task.type, agentId, attempt: task.attempts });
    }
    return task;
  }

  /** Long-poll: returns a task as soon as one fits, or undefined after waitMs. */
  async lease(agentId: string, types: readonly string[], waitMs: number, signal?: AbortSignal): Promise<TaskRow | undefined> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      if (signal?.aborted || this.stopped) return undefined;
      let task: TaskRow | undefined;
      try {
        task = await this.tryLease(agentId, types);
      } catch (err) {
        if (this.stopped) return undefined; // the pool closed under a long-poll at shutdown
        throw err;
      }
      if (task) return task;
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.wakeups.off('task', done);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, left);
        this.wakeups.once('task', done);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
  }

  /** Locks the task and checks the caller still holds its lease. */
  private async lockLeased(c: Queryable, id: string, token: string): Promise<TaskRow> {
    const res = await c.query(`SELECT ${TASK_COLUMNS} FROM tasks WHERE id = $1 FOR UPDATE`, [id]);
    const task = res.rows[0] as TaskRow | undefined;
    if (!task || task.state !== 'leased' || task.leaseToken !== token) throw leaseLost(id);
    return task;
  }

  /** Progress doubles as heartbeat: it extends the lease. Progress never goes back. */
  async progress(id: string, token: string, progress: number, stage: string | null, message?: string, facts?: Record<string, unknown>): Promise<{ cancelRequested: boolean }> {
    const clamped = Math.max(0, Math.min(1, Number.isFinite(progress) ? progress : 0));
    try {
      return await this.recordProgress(id, token, clamped, stage, message, facts);
    } catch (err) {
      if (!(err instanceof AppError) || err.error === LEASE_LOST) throw err;
      // The handler refused the task on what the agent reported (say, not enough credits for the
      // video's length): that is final, and the agent stops on this answer.
      await this.fail(id, token, err.message, false, err.error);
      return { cancelRequested: true };
    }
  }

  private async recordProgress(id: string, token: string, clamped: number, stage: string | null, message?: string, facts?: Record<string, unknown>): Promise<{ cancelRequested: boolean }> {
    return this.db.tx(async (c) => {
      const task = await this.lockLeased(c, id, token);
      const res = await c.query(
        `UPDATE tasks SET progress = GREATEST(progress, $2), stage = COALESCE($3, stage),
           lease_expires_at = $5::timestamptz + make_interval(secs => $4 / 1000.0)
         WHERE id = $1 RETURNING progress, cancel_requested AS "cancelRequested"`,
        [id, clamped, stage, this.opts.leaseTtlMs, this.now()],
      );
      const row = res.rows[0];
      await this.handler(task.type).onProgress?.(c, task, row.progress, stage ?? task.stage, facts);
      this.metrics.taskProgress.labels(task.type, id).set(row.progress);
      if (message) this.log.debug('task progress', { taskId: id, progress: row.progress, stage, message });
      return { cancelRequested: row.cancelRequested };
    });
  }

  async complete(id: string, token: string, result: Record<string, unknown>): Promise<void> {
    let task: TaskRow | undefined;
    try {
      await this.db.tx(async (c) => {
        task = await this.lockLeased(c, id, token);
        await c.query(
          `UPDATE tasks SET state = 'completed', result = $2, progress = 1, lease_token = NULL, lease_expires_at = NULL, finished_at = now() WHERE id = $1`,
          [id, result],
        );
        await this.handler(task.type).onComplete(c, task, result);
        await this.event(id, task.leasedBy, 'completed', null, c);
      });
    } catch (err) {
      if (err instanceof AppError && err.error === LEASE_LOST) throw err;
      if (!task) throw err;
      // The result could not be accepted (for example a short past the video's end): that is final.
      const reason = err instanceof AppError ? err.message : 'The result could not be stored';
      if (!(err instanceof AppError)) this.log.error('task result rejected', { taskId: id, err });
      await this.fail(id, token, reason, false, 'RESULT_REJECTED');
      return;
    }
    this.finished(task!, 'completed');
  }

  /** A failure the agent reports. Retryable ones go back to the queue until attempts run out. */
  async fail(id: string, token: string, reason: string, retryable: boolean, code = 'TASK_FAILED'): Promise<{ willRetry: boolean }> {
    let task!: TaskRow;
    let final = false;
    await this.db.tx(async (c) => {
      task = await this.lockLeased(c, id, token);
      final = !retryable || task.attempts >= task.maxAttempts;
      if (final) {
        await this.failForGood(c, task, reason, code);
      } else {
        await c.query(
          `UPDATE tasks SET state = 'queued', lease_token = NULL, leased_by = NULL, lease_expires_at = NULL, last_error = $2, queued_at = now() WHERE id = $1`,
          [id, reason],
        );
        await c.query(`SELECT pg_notify('${NOTIFY_CHANNEL}', $1)`, [task.type]);
      }
      await this.event(id, task.leasedBy, final ? 'failed' : 'retry', reason, c);
    });
    if (final) this.finished(task, 'failed');
    return { willRetry: !final };
  }

  /** An agent hands a lease back (shutdown): the attempt does not count against the task. */
  async release(id: string, token: string, reason: string): Promise<void> {
    await this.db.tx(async (c) => {
      const task = await this.lockLeased(c, id, token);
      await c.query(
        `UPDATE tasks SET state = 'queued', lease_token = NULL, leased_by = NULL, lease_expires_at = NULL,
           attempts = GREATEST(attempts - 1, 0), last_error = $2 WHERE id = $1`,
        [id, reason],
      );
      await c.query(`SELECT pg_notify('${NOTIFY_CHANNEL}', $1)`, [task.type]);
      await this.event(id, task.leasedBy, 'released', reason, c);
    });
    this.log.info('task released', { taskId: id, reason });
  }

  /** Asks the agent running it to stop (seen on its next heartbeat); a queued task is cancelled at once. */
  async requestCancel(c: Queryable, id: string): Promise<void> {
    await c.query(`UPDATE tasks SET state = 'cancelled', finished_at = now() WHERE id = $1 AND state = 'queued'`, [id]);
    await c.query(`UPDATE tasks SET cancel_requested = true WHERE id = $1 AND state = 'leased'`, [id]);
  }

  /** Takes back leases whose agent went silent; returns how many. Called on a timer and by tests. */
  async tick(): Promise<number> {
    const expired = await this.db.query<{ id: string }>(
      `SELECT id FROM tasks WHERE state = 'leased' AND lease_expires_at < $1 ORDER BY lease_expires_at LIMIT 100`,
      [this.now()],
    );
    let count = 0;
    for (const { id } of expired) {
      let finalTask: TaskRow | undefined;
      await this.db.tx(async (c) => {
        const res = await c.query(`SELECT ${TASK_COLUMNS} FROM tasks WHERE id = $1 FOR UPDATE SKIP LOCKED`, [id]);
        const task = res.rows[0] as TaskRow | undefined;
        if (!task || task.state !== 'leased' || !task.leaseExpiresAt || new Date(task.leaseExpiresAt) >= this.now()) return;
        count++;
        this.metrics.leasesExpired.labels(task.type).inc();
        const reason = `agent ${task.leasedBy} went silent past its lease`;
        if (task.attempts >= task.maxAttempts) {
          await this.failForGood(c, task, `The task was lost ${task.attempts} times (agents stopped responding); giving up`, 'AGENT_LOST');
          finalTask = task;
        } else {
          await c.query(
            `UPDATE tasks SET state = 'queued', lease_token = NULL, leased_by = NULL, lease_expires_at = NULL, last_error = $2, queued_at = now() WHERE id = $1`,
            [id, reason],
          );
          await c.query(`SELECT pg_notify('${NOTIFY_CHANNEL}', $1)`, [task.type]);
        }
        await this.event(id, task.leasedBy, 'lease_expired', reason, c);
        this.log.warn('lease expired', { taskId: id, type: task.type, agentId: task.leasedBy, attempt: task.attempts });
      });
      if (finalTask) this.finished(finalTask, 'failed');
    }
    return count;
  }

  private async failForGood(c: Queryable, task: TaskRow, reason: string, code: string): Promise<void> {
    await c.query(
      `UPDATE tasks SET state = 'failed', last_error = $2, lease_token = NULL, lease_expires_at = NULL, finished_at = now() WHERE id = $1`,
      [task.id, reason],
    );
    await this.handler(task.type).onFailed(c, task, reason, code);
  }

  private finished(task: TaskRow, outcome: 'completed' | 'failed'): void {
    this.metrics.tasksFinished.labels(task.type, outcome).inc();
    this.metrics.taskProgress.remove(task.type, task.id);
    if (task.startedAt) this.metrics.taskDuration.labels(task.type).observe((Date.now() - new Date(task.startedAt).getTime()) / 1000);
    this.log.info('task finished', { taskId: task.id, type: task.type, outcome });
    const after = this.handler(task.type).afterFinish;
    if (after) after(task, outcome).catch((err) => this.log.error('after-finish hook failed', { taskId: task.id, err }));
  }

  private async event(taskId: string, agentId: string | null, kind: string, detail: string | null, c: Queryable = this.db.pool): Promise<void> {
    await c.query('INSERT INTO task_events (task_id, agent_id, kind, detail) VALUES ($1, $2, $3, $4)', [taskId, agentId, kind, detail]);
  }

  /** Queue depth per type, for metrics. */
  async refreshGauges(): Promise<void> {
    const rows = await this.db.query<{ type: string; state: string; n: number }>(
      `SELECT type, state, count(*)::int AS n FROM tasks WHERE state IN ('queued', 'leased') GROUP BY type, state`,
    );
    this.metrics.tasksQueued.reset();
    this.metrics.tasksRunning.reset();
    for (const r of rows) (r.state === 'queued' ? this.metrics.tasksQueued : this.metrics.tasksRunning).labels(r.type).set(r.n);
  }
}

/** Where a task's uploads land; the whole prefix is removed when the task fails for good. */
export const taskObjectPrefix = (task: Pick<TaskRow, 'id' | 'organizationId'>) => `orgs/${task.organizationId ?? 'system'}/tasks/${task.id}/`;
export const taskObjectKey = (task: Pick<TaskRow, 'id' | 'organizationId'>, name: string) => taskObjectPrefix(task) + name;
