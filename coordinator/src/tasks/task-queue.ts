import { EventEmitter } from 'node:events';
import pg from 'pg';
import { isTransientDbError, type Db, type Queryable } from '../db/db.js';
import { AppError } from '../../../common/src/errors.js';
import { newId, randomToken } from '../../../common/src/ids.js';
import type { Logger } from '../../../common/src/logger.js';
import { TASK_STATES, type TaskState, type TaskType } from '../../../common/src/tasks.js';
import { ContractViolation, DEFAULT_TASK_TIME_LIMITS_SEC, type TaskPayload } from '../../../common/src/tasks/contracts.js';
import { describeTag, placementOf, waitingMessage, type TaskPlacement } from '../../../common/src/placement.js';
import type { Metrics, RequeueReason as Requeue, TaskOutcome as FinishOutcome } from '../metrics/metrics.js';

export interface TaskRow {
  id: string;
  type: TaskType;
  organizationId: string | null;
  subjectId: string | null;
  payload: Record<string, unknown>;
  state: TaskState;
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
  requires: string[];
  prefers: string[];
  waitingReason: string | null;
}

const TASK_COLUMNS = `id, type, organization_id AS "organizationId", subject_id AS "subjectId", payload, state, attempts,
  max_attempts AS "maxAttempts", lease_token AS "leaseToken", leased_by AS "leasedBy", lease_expires_at AS "leaseExpiresAt",
  progress, stage, result, last_error AS "lastError", cancel_requested AS "cancelRequested", queued_at AS "queuedAt",
  started_at AS "startedAt", requires, prefers, waiting_reason AS "waitingReason"`;

/** What a domain (jobs, renders, probes) does when one of its tasks moves. Runs inside the task's
 *  transaction, so the domain's rows and the task's state change together or not at all. Facts and
 *  results arrive as the agent sent them: domains read them through their task type's contract
 *  (./typed-outcome.ts), and a ContractViolation thrown here refuses the report. */
export interface TaskOutcomeHandler {
  /** Throwing an AppError refuses the task for good with its message (the agent is told to cancel). */
  onProgress?(c: Queryable, task: TaskRow, progress: number, stage: string | null, facts?: unknown): Promise<void>;
  onComplete(c: Queryable, task: TaskRow, result: unknown): Promise<void>;
  /** The task failed for good (bad input, too many lost leases, cancelled, no agent can run it). */
  onFailed(c: Queryable, task: TaskRow, reason: string, code: string): Promise<void>;
  /** Adds what must be fresh when an agent takes the task (signed URLs) to the stored payload. */
  prepareLease?(task: TaskRow): Promise<Record<string, unknown>>;
  /** Runs after the transaction committed (webhooks, notifications). A cancelled task is 'failed' here. */
  afterFinish?(task: TaskRow, outcome: 'completed' | 'failed'): Promise<void>;
}

export const LEASE_LOST = 'lease_lost';
const leaseLost = (id: string) => new AppError(409, LEASE_LOST, `Task ${id} is no longer leased with this token`);
const NOTIFY_CHANNEL = 'shorts_tasks';
/** Wakes every waiter whatever its types (start, reconnect, stop). */
const WAKE_ALL = '*';
/** Tries a completion whose transaction hit a deadlock or a dropped connection before the agent is told to retry. */
const COMPLETE_TRIES = 4;
/** Failed payload preparations (signing URLs) before a task fails for good. */
const PREPARE_TRIES = 5;

export interface TaskQueueOptions {
  leaseTtlMs: number;
  maxAttempts: number;
  /** How long a task preferring a capability is kept for a connected agent that has it and a free slot. */
  preferGraceMs: number;
  /** A queued task waiting this long with no connected agent able to run it says so (API, log once). */
  waitingNoticeMs: number;
  /** A task whose requirements no connected agent of its type meets fails after waiting this long. */
  unmetNeedsFailMs: number;
  /** Wall-clock limit of one attempt by type (default: each contract's). Agents stop their tasks at
   *  it; the watchdog takes back a task still leased at its limit plus `timeLimitGraceMs`, so an agent
   *  that hangs but keeps heartbeating cannot hold work for ever. */
  timeLimitsSec?: Partial<Record<TaskType, number>>;
  /** Time for the agent to stop at its limit and report it (default: 1 min, or 2 lease TTLs if longer). */
  timeLimitGraceMs?: number;
}

export interface EnqueueInput<T extends TaskType> {
  type: T;
  organizationId?: string | null;
  subjectId?: string | null;
  payload: TaskPayload<T>;
  priority?: number;
  maxAttempts?: number;
  /** Capabilities beyond the type's own placement (its contract; common/src/placement.ts). */
  placement?: Partial<TaskPlacement>;
}

export type CancelOutcome = 'cancelled' | 'cancel_requested' | 'already_finished' | 'not_found';

/** Why the watchdog takes a lease back from its agent. */
type TakeBack = Extract<Requeue, 'lease_expired' | 'time_limit'>;

const formatLimit = (sec: number) => (sec % 3600 === 0 ? `${sec / 3600} h` : sec % 60 === 0 ? `${sec / 60} min` : `${sec} s`);

export class TaskQueue {
  private readonly wakeups = new EventEmitter();
  /** NOTIFYs seen per task type: a waiter compares before and after its lease query, so a wake-up
   *  that arrives while the query runs is not lost. */
  private readonly wakeCounts = new Map<string, number>();
  private listener?: pg.Client;
  private handlers = new Map<TaskType, TaskOutcomeHandler>();
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly opts: TaskQueueOptions,
    private readonly log: Logger,
    private readonly metrics: Metrics,
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

  private wake(type: string): void {
    this.wakeCounts.set(type, (this.wakeCounts.get(type) ?? 0) + 1);
    this.wakeups.emit(type);
  }

  private wakeCount(types: readonly string[]): number {
    let n = this.wakeCounts.get(WAKE_ALL) ?? 0;
    for (const t of types) n += this.wakeCounts.get(t) ?? 0;
    return n;
  }

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
    // The payload is the task type: only waiters that can take that type wake.
    client.on('notification', (msg) => this.wake(msg.payload || WAKE_ALL));
    await client.query(`LISTEN ${NOTIFY_CHANNEL}`);
    this.listener = client;
    // Anything enqueued while we were not listening.
    this.wake(WAKE_ALL);
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
    this.wake(WAKE_ALL);
    await this.listener?.end().catch(() => undefined);
  }

  async enqueue<T extends TaskType>(c: Queryable, input: EnqueueInput<T>): Promise<string> {
    const id = newId();
    const needs = placementOf(input.type, input.placement);
    await c.query(
      `INSERT INTO tasks (id, type, organization_id, subject_id, payload, priority, max_attempts, requires, prefers)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [id, input.type, input.organizationId ?? null, input.subjectId ?? null, input.payload, input.priority ?? 0,
        input.maxAttempts ?? this.opts.maxAttempts, needs.requires, needs.prefers],
    );
    await this.notify(c, input.type);
    this.metrics.tasksEnqueued.labels(input.type).inc();
    return id;
  }

  /** Delivered at commit, so an agent never wakes for a task it cannot see yet. */
  private async notify(c: Queryable, type: string): Promise<void> {
    await c.query(`SELECT pg_notify('${NOTIFY_CHANNEL}', $1)`, [type]);
  }

  /** The payload an agent receives for a task it just leased. */
  async leasePayload(task: TaskRow): Promise<Record<string, unknown>> {
    const prepare = this.handler(task.type).prepareLease;
    return prepare ? { ...task.payload, ...(await prepare(task)) } : task.payload;
  }

  /** An agent's report that does not match its task type's contract (or is not JSON): the task fails
   *  for good with a reason that says so, and the agent is answered INVALID_ARGUMENT. */
  async refuse(id: string, token: string, problem: string): Promise<never> {
    this.log.error('agent report refused', { taskId: id, err: problem });
    await this.fail(id, token, `The agent's report was refused: ${problem}`, false, 'CONTRACT_VIOLATION');
    throw new AppError(400, 'contract_violation', problem);
  }

  /** Why the work for a job or render waits, when no connected agent can take it (else undefined). */
  async waitingReason(subjectId: string): Promise<string | undefined> {
    return (await this.waitingReasons([subjectId])).get(subjectId);
  }

  /** The same for many subjects (a page of the job list) in one query. */
  async waitingReasons(subjectIds: string[]): Promise<Map<string, string>> {
    if (subjectIds.length === 0) return new Map();
    const rows = await this.db.query<{ subjectId: string; reason: string }>(
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
  async tasksAhead(subjectId: string, type: TaskType): Promise<number | undefined> {
    const row = await this.db.one<{ ahead: number | null }>(
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

  async get(id: string): Promise<TaskRow | undefined> {
    return this.db.one(`SELECT ${TASK_COLUMNS} FROM tasks WHERE id = $1`, [id]);
  }

  /**
   * Atomically takes the best queued task for this agent; only one agent can win it.
   *
   * Placement: the agent must have every tag the task requires. A task whose preferred tags the
   * agent lacks is offered to it only when no other online agent with them (and the task's type)
   * has a free slot, or once the task has waited `preferGraceMs`.
   *
   * Fairness: among the tasks this agent may take, the organization with the fewest running tasks
   * goes first, then the one whose last lease is oldest (round-robin), then each organization's own
   * order (priority, age). One organization's 500 queued renders do not starve another's one.
   * Only the first few of each organization are ranked, so the sort stays small.
   */
  async tryLease(agentId: string, types: readonly string[]): Promise<TaskRow | undefined> {
    const token = randomToken(24);
    const task = await this.db.one<TaskRow & { waitedSec: number }>(
      `WITH me AS (
         SELECT capability_tags AS tags FROM agents WHERE id = $2 AND state = 'online'
       ),
       -- Other agents that could take work now: online, heard from lately, with a free slot.
       free_agents AS MATERIALIZED (
         SELECT a.task_types, a.capability_tags AS tags FROM agents a
         WHERE a.id <> $2 AND a.state = 'online' AND a.last_seen_at > now() - make_interval(secs => $4 / 1000.0)
           AND (SELECT count(*) FROM tasks r WHERE r.state = 'leased' AND r.leased_by = a.id) < a.max_slots
       ),
       eligible AS (
         SELECT t.id, t.organization_id AS org, t.priority, t.queued_at,
                row_number() OVER (PARTITION BY t.organization_id ORDER BY t.priority DESC, t.queued_at, t.id) AS place
         FROM tasks t, me
         WHERE t.state = 'queued' AND NOT t.cancel_requested AND t.type = ANY($3::text[]) AND t.requires <@ me.tags
           AND (t.prefers <@ me.tags
                OR t.queued_at <= now() - make_interval(secs => $5 / 1000.0)
                OR NOT EXISTS (SELECT 1 FROM free_agents f
                               WHERE t.type = ANY(f.task_types) AND f.tags @> t.requires AND f.tags @> t.prefers))
       ),
       heads AS (SELECT * FROM eligible WHERE place <= 4),
       turns AS (
         SELECT o.org,
                (SELECT count(*) FROM tasks r WHERE r.state = 'leased' AND r.organization_id = o.org) AS running,
                (SELECT max(l.started_at) FROM tasks l WHERE l.organization_id = o.org) AS served_at
         FROM (SELECT DISTINCT org FROM heads) o
       ),
       ranked AS (
         SELECT h.id, row_number() OVER (ORDER BY h.priority DESC, o.running, o.served_at NULLS FIRST, h.place, h.queued_at, h.id) AS rank
         FROM heads h JOIN turns o ON o.org IS NOT DISTINCT FROM h.org
       )
       UPDATE tasks SET state = 'leased', lease_token = $1, leased_by = $2,
         lease_expires_at = now() + make_interval(secs => $4 / 1000.0), attempts = attempts + 1,
         started_at = now(), stage = NULL, waiting_reason = NULL
       WHERE id = (SELECT t.id FROM tasks t JOIN ranked r ON r.id = t.id WHERE t.state = 'queued'
                   ORDER BY r.rank LIMIT 1 FOR UPDATE OF t SKIP LOCKED)
       RETURNING ${TASK_COLUMNS}, extract(epoch FROM now() - queued_at)::float8 AS "waitedSec"`,
      [token, agentId, types, this.opts.leaseTtlMs, this.opts.preferGraceMs],
    );
    if (task) {
      await this.event(task.id, agentId, 'leased', `attempt ${task.attempts}`);
      this.metrics.tasksLeased.labels(task.type).inc();
      if (task.attempts > 1) this.metrics.reLeases.labels(task.type).inc();
      this.metrics.leaseWait.labels(task.type).observe(Math.max(0, task.waitedSec));
      this.log.info('task leased', { taskId: task.id, type: task.type, agentId, attempt: task.attempts });
    }
    return task;
  }

  /** Milliseconds until a task this agent was passed over for (it lacks a preferred tag) becomes
   *  its to take, if there is one: the waiter looks again then, as no NOTIFY marks that moment. */
  private async deferredRecheckMs(agentId: string, types: readonly string[]): Promise<number | undefined> {
    const row = await this.db.one<{ ms: number | null }>(
      `SELECT (extract(epoch FROM min(t.queued_at) + make_interval(secs => $3 / 1000.0) - now()) * 1000)::float8 AS ms
       FROM tasks t, agents me
       WHERE me.id = $1 AND t.state = 'queued' AND NOT t.cancel_requested AND t.type = ANY($2::text[])
         AND t.requires <@ me.capability_tags AND NOT t.prefers <@ me.capability_tags`,
      [agentId, types, this.opts.preferGraceMs],
    );
    return row?.ms == null ? undefined : Math.max(50, row.ms);
  }

  /** Long-poll: returns a task as soon as one fits, or undefined after waitMs. */
  async lease(agentId: string, types: readonly string[], waitMs: number, signal?: AbortSignal): Promise<TaskRow | undefined> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      if (signal?.aborted || this.stopped) return undefined;
      const seen = this.wakeCount(types);
      let task: TaskRow | undefined;
      let recheckMs: number | undefined;
      try {
        task = await this.tryLease(agentId, types);
        if (!task && this.wakeCount(types) === seen) recheckMs = await this.deferredRecheckMs(agentId, types);
      } catch (err) {
        if (this.stopped) return undefined; // the pool closed under a long-poll at shutdown
        throw err;
      }
      if (task) return task;
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      // A NOTIFY for our types arrived while the queries ran: look again before sleeping.
      if (this.wakeCount(types) !== seen) continue;
      await this.waitForWake(types, Math.min(left, recheckMs ?? left), signal);
    }
  }

  private waitForWake(types: readonly string[], ms: number, signal?: AbortSignal): Promise<void> {
    const events = [...new Set([...types, WAKE_ALL])];
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        for (const e of events) this.wakeups.off(e, done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      for (const e of events) this.wakeups.on(e, done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /** A lease the agent never received (its call was cancelled, or preparing the payload failed):
   *  back to the front of the queue, the attempt not counted. A task whose payload cannot be
   *  prepared again and again fails for good instead of going round forever. */
  async handBack(task: TaskRow, reason: string, opts: { prepareFailed?: boolean } = {}): Promise<void> {
    let failed: TaskRow | undefined;
    let cancelled: TaskRow | undefined;
    await this.db.tx(async (c) => {
      const locked = await this.lockLeased(c, task.id, task.leaseToken ?? '');
      if (opts.prepareFailed) {
        await this.event(task.id, task.leasedBy, 'prepare_failed', reason, c);
        const tries = (await c.query(`SELECT count(*)::int AS n FROM task_events WHERE task_id = $1 AND kind = 'prepare_failed'`, [task.id])).rows[0].n;
        if (tries >= PREPARE_TRIES) {
          await this.failForGood(c, locked, `The task could not be handed to an agent (${reason})`, 'PREPARE_FAILED');
          await this.event(task.id, task.leasedBy, 'failed', reason, c);
          failed = locked;
          return;
        }
      }
      if ((await this.requeue(c, locked, reason, 'handed_back')) === 'cancelled') cancelled = locked;
    });
    if (failed) this.finished(failed, TASK_STATES.failed);
    else if (cancelled) this.finished(cancelled, TASK_STATES.cancelled);
    this.log.warn('lease handed back', { taskId: task.id, type: task.type, agentId: task.leasedBy, reason, failedForGood: !!failed });
  }

  /** Locks the task and checks the caller still holds its lease. */
  private async lockLeased(c: Queryable, id: string, token: string): Promise<TaskRow> {
    const res = await c.query(`SELECT ${TASK_COLUMNS} FROM tasks WHERE id = $1 FOR UPDATE`, [id]);
    const task = res.rows[0] as TaskRow | undefined;
    if (!task || task.state !== TASK_STATES.leased || task.leaseToken !== token) throw leaseLost(id);
    return task;
  }

  /** Progress doubles as heartbeat: it extends the lease. Progress never goes back. */
  async progress(id: string, token: string, progress: number, stage: string | null, message?: string, facts?: unknown): Promise<{ cancelRequested: boolean }> {
    const clamped = Math.max(0, Math.min(1, Number.isFinite(progress) ? progress : 0));
    try {
      return await this.recordProgress(id, token, clamped, stage, message, facts);
    } catch (err) {
      if (err instanceof ContractViolation) return this.refuse(id, token, err.message);
      if (!(err instanceof AppError) || err.error === LEASE_LOST) throw err;
      // The handler refused the task on what the agent reported (say, not enough credits for the
      // video's length): that is final, and the agent stops on this answer.
      await this.fail(id, token, err.message, false, err.error);
      return { cancelRequested: true };
    }
  }

  private async recordProgress(id: string, token: string, clamped: number, stage: string | null, message?: string, facts?: unknown): Promise<{ cancelRequested: boolean }> {
    return this.db.tx(async (c) => {
      const task = await this.lockLeased(c, id, token);
      const res = await c.query(
        `UPDATE tasks SET progress = GREATEST(progress, $2), stage = COALESCE($3, stage),
           lease_expires_at = now() + make_interval(secs => $4 / 1000.0)
         WHERE id = $1 RETURNING progress, cancel_requested AS "cancelRequested"`,
        [id, clamped, stage, this.opts.leaseTtlMs],
      );
      const row = res.rows[0];
      await this.handler(task.type).onProgress?.(c, task, row.progress, stage ?? task.stage, facts);
      if (message) this.log.debug('task progress', { taskId: id, progress: row.progress, stage, message });
      return { cancelRequested: row.cancelRequested };
    });
  }

  /** Stores the result with the domain's rows. A deadlock or dropped connection is retried here and,
   *  if it persists, answered as unavailable so the agent retries: finished work is never thrown away
   *  for a database hiccup. */
  async complete(id: string, token: string, result: unknown): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      let task: TaskRow | undefined;
      try {
        await this.db.tx(async (c) => {
          task = await this.lockLeased(c, id, token);
          await c.query(
            `UPDATE tasks SET state = 'completed', result = $2, progress = 1, lease_token = NULL, lease_expires_at = NULL,
               waiting_reason = NULL, finished_at = now() WHERE id = $1`,
            [id, result],
          );
          await this.handler(task.type).onComplete(c, task, result);
          await this.event(id, task.leasedBy, 'completed', null, c);
        });
        this.finished(task!, TASK_STATES.completed);
        return;
      } catch (err) {
        if (err instanceof AppError && err.error === LEASE_LOST) throw err;
        if (err instanceof ContractViolation) return this.refuse(id, token, err.message);
        if (isTransientDbError(err)) {
          this.log.warn('task completion hit a transient database error', { taskId: id, attempt, err: (err as Error).message });
          if (attempt >= COMPLETE_TRIES) throw new AppError(503, 'unavailable', 'The result could not be stored just now; retry');
          await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
          continue;
        }
        if (!task) throw err;
        // The result could not be accepted (for example a short past the video's end): that is final.
        const reason = err instanceof AppError ? err.message : 'The result could not be stored';
        if (!(err instanceof AppError)) this.log.error('task result rejected', { taskId: id, err });
        await this.fail(id, token, reason, false, 'RESULT_REJECTED');
        return;
      }
    }
  }

  /** A failure the agent reports. Retryable ones go back to the queue until attempts run out. */
  async fail(id: string, token: string, reason: string, retryable: boolean, code = 'TASK_FAILED'): Promise<{ willRetry: boolean }> {
    let task!: TaskRow;
    let ended: FinishOutcome | undefined;
    await this.db.tx(async (c) => {
      task = await this.lockLeased(c, id, token);
      if (!retryable || task.attempts >= task.maxAttempts) ended = await this.failForGood(c, task, reason, code);
      else if ((await this.requeue(c, task, reason, 'retry')) === 'cancelled') ended = TASK_STATES.cancelled;
      await this.event(id, task.leasedBy, ended ? 'failed' : 'retry', reason, c);
    });
    if (ended) this.finished(task, ended);
    return { willRetry: !ended };
  }

  /** An agent hands a lease back (shutdown): the attempt does not count against the task. */
  async release(id: string, token: string, reason: string): Promise<void> {
    let cancelled: TaskRow | undefined;
    await this.db.tx(async (c) => {
      const task = await this.lockLeased(c, id, token);
      if ((await this.requeue(c, task, reason, 'released')) === 'cancelled') cancelled = task;
    });
    if (cancelled) this.finished(cancelled, TASK_STATES.cancelled);
    this.log.info('task released', { taskId: id, reason });
  }

  /**
   * The one way a leased task goes back to the queue. A task whose cancel was asked is not run
   * again: it fails for good as cancelled. A lost lease or a retryable failure counts the attempt and
   * goes to the back of the line; a lease handed back (shutdown, never delivered) does not.
   */
  private async requeue(c: Queryable, task: TaskRow, reason: string, why: Requeue): Promise<'requeued' | 'cancelled'> {
    if (task.cancelRequested) {
      await this.failForGood(c, task, 'Cancelled', 'CANCELLED');
      await this.event(task.id, task.leasedBy, 'cancelled', reason, c);
      return 'cancelled';
    }
    const counts = why === 'lease_expired' || why === 'time_limit' || why === 'retry';
    await c.query(
      `UPDATE tasks SET state = 'queued', lease_token = NULL, leased_by = NULL, lease_expires_at = NULL, cancel_requested = false,
         last_error = $2,
         attempts = CASE WHEN $3 THEN attempts ELSE GREATEST(attempts - 1, 0) END,
         queued_at = CASE WHEN $3 THEN now() ELSE queued_at END
       WHERE id = $1`,
      [task.id, reason, counts],
    );
    if (why !== 'retry') await this.event(task.id, task.leasedBy, why, reason, c);
    await this.notify(c, task.type);
    this.metrics.tasksRequeued.labels(task.type, why).inc();
    return 'requeued';
  }

  /**
   * Cancels a task: a queued one at once (its domain hears it as failed, code CANCELLED), a leased
   * one by asking its agent to stop (it learns on its next progress report and fails the task as
   * cancelled; if it goes silent instead, the watchdog finishes it as cancelled, never re-queues it).
   */
  async cancel(id: string, reason = 'Cancelled'): Promise<CancelOutcome> {
    let finishedTask: TaskRow | undefined;
    const outcome = await this.db.tx(async (c): Promise<CancelOutcome> => {
      const task = (await c.query(`SELECT ${TASK_COLUMNS} FROM tasks WHERE id = $1 FOR UPDATE`, [id])).rows[0] as TaskRow | undefined;
      if (!task) return 'not_found';
      if (task.state === TASK_STATES.queued) {
        await this.failForGood(c, task, reason, 'CANCELLED');
        await this.event(id, null, 'cancelled', reason, c);
        finishedTask = task;
        return 'cancelled';
      }
      if (task.state === TASK_STATES.leased) {
        await c.query(`UPDATE tasks SET cancel_requested = true WHERE id = $1`, [id]);
        await this.event(id, task.leasedBy, 'cancel_requested', reason, c);
        return 'cancel_requested';
      }
      return 'already_finished';
    });
    if (finishedTask) this.finished(finishedTask, TASK_STATES.cancelled);
    this.log.info('task cancel', { taskId: id, outcome });
    return outcome;
  }

  /** The watchdog: takes back leases whose agent went silent or kept the task past its time limit
   *  (returns how many), marks silent agents offline, and makes work that no connected agent can take
   *  say so. Called on a timer and by tests. One task or step that fails is logged and skipped; it
   *  never holds up the others. */
  async tick(): Promise<number> {
    const expired = await this.db.query<{ id: string }>(
      `SELECT id FROM tasks WHERE state = 'leased' AND lease_expires_at < now() ORDER BY lease_expires_at LIMIT 100`,
    );
    const overdue = await this.overdueLeases().catch((err) => {
      this.log.error('lease watchdog: time limits', { err });
      return [];
    });
    let count = 0;
    for (const [ids, why] of [[expired.map((r) => r.id), 'lease_expired'], [overdue, 'time_limit']] as const) {
      for (const id of ids) {
        try {
          if (await this.takeBack(id, why)) count++;
        } catch (err) {
          this.log.error('lease watchdog: could not take back a task', { taskId: id, why, err });
        }
      }
    }
    await this.finishCancelledQueued().catch((err) => this.log.error('lease watchdog: cancel requests', { err }));
    await this.markSilentAgentsOffline().catch((err) => this.log.error('lease watchdog: agent states', { err }));
    await this.noticeWaitingTasks().catch((err) => this.log.error('lease watchdog: waiting tasks', { err }));
    return count;
  }

  private timeLimitSec(type: TaskType): number {
    return this.opts.timeLimitsSec?.[type] ?? DEFAULT_TASK_TIME_LIMITS_SEC[type];
  }

  private get timeLimitGraceSec(): number {
    return (this.opts.timeLimitGraceMs ?? Math.max(60_000, 2 * this.opts.leaseTtlMs)) / 1000;
  }

  /** Leased tasks running past their type's limit plus the grace, by the database's clock (the one
   *  that stamped started_at), whatever their agent's heartbeats say. */
  private async overdueLeases(): Promise<string[]> {
    const types = Object.keys(DEFAULT_TASK_TIME_LIMITS_SEC) as TaskType[];
    const rows = await this.db.query<{ id: string }>(
      `SELECT t.id FROM tasks t JOIN unnest($1::text[], $2::float8[]) AS l(type, limit_sec) ON l.type = t.type
       WHERE t.state = 'leased' AND t.started_at < now() - make_interval(secs => l.limit_sec + $3)
       ORDER BY t.started_at LIMIT 100`,
      [types, types.map((t) => this.timeLimitSec(t)), this.timeLimitGraceSec],
    );
    return rows.map((r) => r.id);
  }

  /**
   * Takes a lease back from its agent: one whose agent went silent, or one held past its time limit
   * (the agent should have stopped it; it hangs, or ignores its limit). Either costs the attempt and
   * goes back to the queue; the last attempt fails the task for good, a cancelled one ends cancelled.
   * The agent learns its lease is gone on its next call.
   */
  private async takeBack(id: string, why: TakeBack): Promise<boolean> {
    let ended: { task: TaskRow; outcome: FinishOutcome } | undefined;
    const taken = await this.db.tx(async (c) => {
      // Checked again under the lock: the agent may have finished, or the lease moved on, since the scan.
      const res = await c.query(
        `SELECT ${TASK_COLUMNS}, lease_expires_at < now() AS "leaseExpired", extract(epoch FROM now() - started_at)::float8 AS "runSec"
         FROM tasks WHERE id = $1 AND state = 'leased' FOR UPDATE SKIP LOCKED`,
        [id],
      );
      const task = res.rows[0] as (TaskRow & { leaseExpired: boolean; runSec: number | null }) | undefined;
      if (!task) return false;
      const due = why === 'lease_expired' ? task.leaseExpired : (task.runSec ?? 0) > this.timeLimitSec(task.type) + this.timeLimitGraceSec;
      if (!due) return false;
      const limit = formatLimit(this.timeLimitSec(task.type));
      let reason: string;
      let final: { reason: string; code: string };
      if (why === 'lease_expired') {
        this.metrics.leasesExpired.labels(task.type).inc();
        reason = `agent ${task.leasedBy} went silent past its lease`;
        final = { reason: `The task was lost ${task.attempts} times (agents stopped responding); giving up`, code: 'AGENT_LOST' };
      } else {
        reason = `agent ${task.leasedBy} kept the task past its time limit of ${limit} without stopping it; taken back`;
        const tries = task.attempts === 1 ? 'its only attempt' : `${task.attempts} attempts`;
        final = { reason: `The ${task.type} task ran past its time limit of ${limit} and its agent did not stop it (${tries}); giving up`, code: 'TIME_LIMIT' };
      }
      if (task.attempts >= task.maxAttempts && !task.cancelRequested) {
        ended = { task, outcome: await this.failForGood(c, task, final.reason, final.code) };
        await this.event(id, task.leasedBy, why, reason, c);
      } else if ((await this.requeue(c, task, reason, why)) === 'cancelled') {
        ended = { task, outcome: TASK_STATES.cancelled };
      }
      const fields = { taskId: id, type: task.type, agentId: task.leasedBy, attempt: task.attempts };
      if (why === 'lease_expired') this.log.warn('lease expired', fields);
      else this.log.warn('lease taken back: past its time limit', { ...fields, limitSec: this.timeLimitSec(task.type) });
      return true;
    });
    if (ended) this.finished(ended.task, ended.outcome);
    return taken;
  }

  /** Queued tasks an operator asked to cancel (admin CLI, from another process) finish here, with
   *  their domain's onFailed. */
  private async finishCancelledQueued(): Promise<void> {
    const asked = await this.db.query<{ id: string }>(`SELECT id FROM tasks WHERE state = 'queued' AND cancel_requested LIMIT 100`);
    for (const { id } of asked) {
      try {
        await this.cancel(id);
      } catch (err) {
        this.log.error('lease watchdog: could not cancel a task', { taskId: id, err });
      }
    }
  }

  private async markSilentAgentsOffline(): Promise<void> {
    const gone = await this.db.query<{ id: string; name: string }>(
      `UPDATE agents SET state = 'offline', offline_at = now()
       WHERE state <> 'offline' AND last_seen_at < now() - make_interval(secs => $1 / 1000.0) RETURNING id, name`,
      [this.opts.leaseTtlMs],
    );
    for (const a of gone) this.log.warn('agent offline: silent past its lease TTL', { agentId: a.id, name: a.name });
  }

  /**
   * A queued task that has waited past the notice threshold while no connected agent can run it
   * gets a waiting reason (shown by the API, logged once). One whose required capabilities no
   * connected agent of its type has fails for good after `unmetNeedsFailMs`: nothing waits forever
   * for what no agent has. With no agent of its type at all it keeps waiting (one may be restarting).
   */
  private async noticeWaitingTasks(): Promise<void> {
    const agents = await this.db.query<{ taskTypes: string[]; tags: string[] }>(
      `SELECT task_types AS "taskTypes", capability_tags AS tags FROM agents
       WHERE state = 'online' AND last_seen_at > now() - make_interval(secs => $1 / 1000.0)`,
      [this.opts.leaseTtlMs],
    );
    const waiting = await this.db.query<Pick<TaskRow, 'id' | 'type' | 'requires' | 'waitingReason'> & { waitedMs: number }>(
      `SELECT id, type, requires, waiting_reason AS "waitingReason", (extract(epoch FROM now() - queued_at) * 1000)::float8 AS "waitedMs"
       FROM tasks WHERE state = 'queued' AND queued_at < now() - make_interval(secs => $1 / 1000.0)
       ORDER BY queued_at LIMIT 500`,
      [this.opts.waitingNoticeMs],
    );
    for (const task of waiting) {
      try {
        const ofType = agents.filter((a) => a.taskTypes.includes(task.type));
        const able = ofType.some((a) => task.requires.every((tag) => a.tags.includes(tag)));
        if (able) {
          if (task.waitingReason) await this.db.query(`UPDATE tasks SET waiting_reason = NULL WHERE id = $1 AND state = 'queued'`, [task.id]);
          continue;
        }
        const missing = ofType.length ? task.requires.filter((tag) => !ofType.some((a) => a.tags.includes(tag))) : [];
        if (ofType.length && task.waitedMs >= this.opts.unmetNeedsFailMs) {
          await this.failUnplaceable(task.id, missing, task.waitedMs);
          continue;
        }
        const reason = waitingMessage(task.type, missing);
        if (task.waitingReason === reason) continue;
        const marked = await this.db.query(
          `UPDATE tasks SET waiting_reason = $2 WHERE id = $1 AND state = 'queued' AND waiting_reason IS DISTINCT FROM $2 RETURNING id`,
          [task.id, reason],
        );
        if (marked.length) {
          this.log.warn('task waiting: no connected agent can run it', { taskId: task.id, type: task.type, reason, waitedSec: Math.round(task.waitedMs / 1000) });
        }
      } catch (err) {
        this.log.error('lease watchdog: could not mark a waiting task', { taskId: task.id, err });
      }
    }
  }

  private async failUnplaceable(id: string, missing: string[], waitedMs: number): Promise<void> {
    let failed: TaskRow | undefined;
    const reason = `No connected agent has ${missing.map(describeTag).join(' and ') || 'what this task needs'}; gave up after waiting ${Math.round(waitedMs / 1000)} s`;
    await this.db.tx(async (c) => {
      const task = (await c.query(`SELECT ${TASK_COLUMNS} FROM tasks WHERE id = $1 AND state = 'queued' FOR UPDATE SKIP LOCKED`, [id])).rows[0] as TaskRow | undefined;
      if (!task) return;
      await this.failForGood(c, task, reason, 'NO_CAPABLE_AGENT');
      await this.event(id, null, 'failed', reason, c);
      failed = task;
    });
    if (failed) {
      this.log.error('task failed: no agent can run it', { taskId: id, type: failed.type, missing });
      this.finished(failed, TASK_STATES.failed);
    }
  }

  /** Ends the task as failed, or as cancelled when that is why it ends; says which. */
  private async failForGood(c: Queryable, task: TaskRow, reason: string, code: string): Promise<typeof TASK_STATES.failed | typeof TASK_STATES.cancelled> {
    const state = code === 'CANCELLED' ? TASK_STATES.cancelled : TASK_STATES.failed;
    await c.query(
      `UPDATE tasks SET state = $3, last_error = $2, lease_token = NULL, lease_expires_at = NULL, waiting_reason = NULL,
         finished_at = now() WHERE id = $1`,
      [task.id, reason, state],
    );
    await this.handler(task.type).onFailed(c, task, reason, code);
    return state;
  }

  private finished(task: TaskRow, outcome: FinishOutcome): void {
    this.metrics.tasksFinished.labels(task.type, outcome).inc();
    if (task.startedAt) this.metrics.taskDuration.labels(task.type, outcome).observe((Date.now() - new Date(task.startedAt).getTime()) / 1000);
    this.log.info('task finished', { taskId: task.id, type: task.type, outcome });
    const after = this.handler(task.type).afterFinish;
    const domainOutcome = outcome === TASK_STATES.completed ? 'completed' : 'failed';
    if (after) after(task, domainOutcome).catch((err) => this.log.error('after-finish hook failed', { taskId: task.id, err }));
  }

  private async event(taskId: string, agentId: string | null, kind: string, detail: string | null, c: Queryable = this.db.pool): Promise<void> {
    await c.query('INSERT INTO task_events (task_id, agent_id, kind, detail) VALUES ($1, $2, $3, $4)', [taskId, agentId, kind, detail]);
  }
}

/** Where a task's uploads land; the whole prefix is removed when the task fails for good. */
export const taskObjectPrefix = (task: Pick<TaskRow, 'id' | 'organizationId'>) => `orgs/${task.organizationId ?? 'system'}/tasks/${task.id}/`;
export const taskObjectKey = (task: Pick<TaskRow, 'id' | 'organizationId'>, name: string) => taskObjectPrefix(task) + name;
