import { isTransientDbError, type Db, type Queryable } from '../db/db.js';
import { AppError, appErrorOf } from '../errors.js';
import { newId, randomToken } from '../ids.js';
import { logFields, type Logger } from '@shorts/common/logger';
import { TASK_STATES, type TaskType } from '@shorts/common/tasks';
import { ContractViolation, FIRST_STAGES, laterStage, localityOf, placementOf, type TaskPayload } from '@shorts/common/tasks/contracts';
import type { TaskFailureCode } from '@shorts/common/tasks/failure-codes';
import { retry } from '@shorts/common/retry';
import type { TaskPlacement } from '@shorts/common/placement';
import { TASK_COLUMNS, type TaskRow } from './task-row.js';
import { connectedAgentSql } from './liveness.js';
import { heldForAnotherSql, holdEndsSql } from './locality.js';
import { LeaseWatchdog } from './lease-watchdog.js';
import { TaskWakeups } from './wakeups.js';
import { TaskFamilies } from './fan-out.js';
import type { CancelOutcome, QueueCore, TaskOutcomeHandler, TaskQueueOptions } from './queue-core.js';
import { tasksAhead, waitingReasons } from './queue-position.js';
import type { Metrics, RequeueReason as Requeue, TaskOutcome as FinishOutcome } from '../metrics/metrics.js';

export type { TaskRow } from './task-row.js';
export type { CancelOutcome, ChildTask, TaskOutcomeHandler, TaskQueueOptions } from './queue-core.js';

export const LEASE_LOST = 'lease_lost';
const leaseLost = (id: string) => new AppError(409, LEASE_LOST, `Task ${id} is no longer leased with this token`);
/** A completion whose transaction hit a deadlock or a dropped connection is tried 4 times (waits of
 *  about 0.1, 0.2 and 0.4 s) before the agent is told to retry. */
const COMPLETE_RETRY = { tries: 4, first: 100, jitter: 0.25 } as const;
/** Failed payload preparations (signing URLs) before a task fails for good. */
const PREPARE_TRIES = 5;

export interface EnqueueInput<T extends TaskType> {
  type: T;
  organizationId?: string | null;
  subjectId?: string | null;
  payload: TaskPayload<T>;
  priority?: number;
  maxAttempts?: number;
  /** Capabilities beyond the type's own placement (its contract; common/src/placement.ts). */
  placement?: Partial<TaskPlacement>;
  /** Default: the requestId of the API request this runs in (logFields), if any. */
  requestId?: string;
}

export class TaskQueue implements QueueCore {
  /** Wake-ups for agents' long-polls (protected: a test's subclass reads its listeners to see a poll asleep). */
  protected readonly wakeups: TaskWakeups;
  private readonly watchdog: LeaseWatchdog;
  private readonly families: TaskFamilies;
  /** Tasks that end inside a transaction besides the one it is about (a parent its last child
   *  completes): their after-finish runs once it commits. */
  private readonly endedInTx = new WeakMap<Queryable, Array<{ task: TaskRow; outcome: FinishOutcome }>>();
  private handlers = new Map<TaskType, TaskOutcomeHandler>();
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly opts: TaskQueueOptions,
    private readonly log: Logger,
    private readonly metrics: Metrics,
  ) {
    this.wakeups = new TaskWakeups(db.url, log);
    this.watchdog = new LeaseWatchdog(db, opts, log, metrics, this);
    this.families = new TaskFamilies(opts, metrics, this.wakeups, this);
  }

  registerHandler(type: TaskType, handler: TaskOutcomeHandler): void {
    if (this.handlers.has(type)) throw new Error(`duplicate task handler for ${type}`);
    TaskFamilies.check(type, handler);
    this.handlers.set(type, handler);
  }

  /** Checks at start-up that every task type that can be enqueued has an owner. */
  assertHandlers(types: readonly TaskType[]): void {
    const missing = types.filter((t) => !this.handlers.has(t));
    if (missing.length) throw new Error(`no task handler registered for: ${missing.join(', ')}`);
  }

  handlerOf(type: TaskType): TaskOutcomeHandler {
    return this.handler(type);
  }

  private handler(type: TaskType): TaskOutcomeHandler {
    const h = this.handlers.get(type);
    if (!h) throw new Error(`no task handler for ${type}`);
    return h;
  }

  /** LISTEN so that enqueues by any coordinator wake this one's waiting agents at once. */
  start(): Promise<void> {
    return this.wakeups.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.wakeups.stop();
  }

  async enqueue<T extends TaskType>(c: Queryable, input: EnqueueInput<T>): Promise<string> {
    const id = newId();
    const needs = placementOf(input.type, input.placement);
    await c.query(
      `INSERT INTO tasks (id, type, organization_id, subject_id, payload, priority, max_attempts, requires, prefers, request_id, locality)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        id,
        input.type,
        input.organizationId ?? null,
        input.subjectId ?? null,
        input.payload,
        input.priority ?? 0,
        input.maxAttempts ?? this.opts.maxAttempts,
        needs.requires,
        needs.prefers,
        input.requestId ?? requestIdInScope(),
        localityOf(input.type, input.payload),
      ],
    );
    await this.wakeups.notify(c, input.type);
    this.metrics.tasksEnqueued.labels(input.type).inc();
    return id;
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
    return (await waitingReasons(this.db, [subjectId])).get(subjectId);
  }

  /** The same for many subjects (a page of the job list) in one query. */
  waitingReasons(subjectIds: string[]): Promise<Map<string, string>> {
    return waitingReasons(this.db, subjectIds);
  }

  /** How many queued tasks of the type will be leased before the subject's own (./queue-position.ts). */
  tasksAhead(subjectId: string, type: TaskType): Promise<number | undefined> {
    return tasksAhead(this.db, subjectId, type);
  }

  async get(id: string): Promise<TaskRow | undefined> {
    return this.db.one<TaskRow>(`SELECT ${TASK_COLUMNS} FROM tasks WHERE id = $1`, [id]);
  }

  /**
   * Atomically takes the best queued task for this agent; only one agent can win it.
   *
   * Placement: the agent must have every tag the task requires. A task whose preferred tags the
   * agent lacks is offered to it only when no other online agent with them (and the task's type)
   * has a free slot, or once the task has waited `preferGraceMs`.
   *
   * Locality: the first queued task of a job that reads its stored source whole is kept a moment
   * (`localityHoldMs`) for a free agent that holds that source, and offered to others only once that
   * agent is busy or gone (./locality.ts).
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
         SELECT a.id, a.task_types, a.capability_tags AS tags FROM agents a
         WHERE a.id <> $2 AND ${connectedAgentSql('a', '$4')}
           AND (SELECT count(*) FROM tasks r WHERE r.state = 'leased' AND r.leased_by = a.id) < a.max_slots
       ),
       eligible AS (
         SELECT t.id, t.organization_id AS org, t.priority, t.queued_at,
                -- A parent's children, queued in one transaction, go in their order (ids within a millisecond are random).
                row_number() OVER (PARTITION BY t.organization_id ORDER BY t.priority DESC, t.queued_at, t.child_index NULLS FIRST, t.id) AS place
         FROM tasks t, me
         WHERE t.state = 'queued' AND NOT t.cancel_requested AND t.type = ANY($3::text[]) AND t.requires <@ me.tags
           AND (t.prefers <@ me.tags
                OR t.queued_at <= now() - make_interval(secs => $5 / 1000.0)
                OR NOT EXISTS (SELECT 1 FROM free_agents f
                               WHERE t.type = ANY(f.task_types) AND f.tags @> t.requires AND f.tags @> t.prefers))
           AND NOT ${heldForAnotherSql({ t: 't', me: '$2', meTags: 'me.tags', freeAgents: 'free_agents', holdParam: '$7' })}
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
         source_read_by = CASE WHEN locality IS NOT NULL AND result IS NULL THEN $2 ELSE source_read_by END,
         lease_expires_at = now() + make_interval(secs => $4 / 1000.0), attempts = attempts + 1,
         started_at = now(), stage = COALESCE(stage, $6::jsonb ->> type), waiting_reason = NULL
       WHERE id = (SELECT t.id FROM tasks t JOIN ranked r ON r.id = t.id WHERE t.state = 'queued'
                   ORDER BY r.rank LIMIT 1 FOR UPDATE OF t SKIP LOCKED)
       RETURNING ${TASK_COLUMNS}, extract(epoch FROM now() - queued_at)::float8 AS "waitedSec"`,
      // A leased task is in its type's first stage until its agent reports; a task leased again
      // (a retry, a parent's final part) keeps the stage it reached: stages never go back. A part
      // leased with its children's joined result (a split render's join) reads those, not the
      // source: its agent is not recorded as one that read it (./locality.ts).
      [token, agentId, types, this.opts.leaseTtlMs, this.opts.preferGraceMs, FIRST_STAGES, this.opts.localityHoldMs ?? 0],
    );
    if (task) {
      await this.event(task.id, agentId, 'leased', `attempt ${task.attempts}`);
      this.metrics.tasksLeased.labels(task.type).inc();
      if (task.attempts > 1) this.metrics.reLeases.labels(task.type).inc();
      this.metrics.leaseWait.labels(task.type).observe(Math.max(0, task.waitedSec));
      this.log.info('task leased', { taskId: task.id, type: task.type, agentId, attempt: task.attempts, ...requestIdOf(task) });
    }
    return task;
  }

  /** Milliseconds until a task this agent may have been passed over for (it lacks a preferred tag,
   *  or the task is held for an agent that holds its source: ./locality.ts) becomes its to take, if
   *  there is one: the waiter looks again then, as no NOTIFY marks that moment. */
  private async deferredRecheckMs(agentId: string, types: readonly string[]): Promise<number | undefined> {
    const row = await this.db.one<{ ms: number | null }>(
      `SELECT (extract(epoch FROM min(LEAST(
                 CASE WHEN NOT t.prefers <@ me.capability_tags THEN t.queued_at + make_interval(secs => $3 / 1000.0) END,
                 ${holdEndsSql('t', '$4')})) - now()) * 1000)::float8 AS ms
       FROM tasks t, agents me
       WHERE me.id = $1 AND t.state = 'queued' AND NOT t.cancel_requested AND t.type = ANY($2::text[])
         AND t.requires <@ me.capability_tags`,
      [agentId, types, this.opts.preferGraceMs, this.opts.localityHoldMs ?? 0],
    );
    return row?.ms == null ? undefined : Math.max(50, row.ms);
  }

  /** Long-poll: returns a task as soon as one fits, or undefined after waitMs. */
  async lease(agentId: string, types: readonly string[], waitMs: number, signal?: AbortSignal): Promise<TaskRow | undefined> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      if (signal?.aborted || this.stopped) return undefined;
      const seen = this.wakeups.count(types);
      let task: TaskRow | undefined;
      let recheckMs: number | undefined;
      try {
        task = await this.tryLease(agentId, types);
        if (!task && this.wakeups.count(types) === seen) recheckMs = await this.deferredRecheckMs(agentId, types);
      } catch (err) {
        if (this.stopped) return undefined; // the pool closed under a long-poll at shutdown
        throw err;
      }
      if (task) return task;
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      // A NOTIFY for our types arrived while the queries ran: look again before sleeping.
      if (this.wakeups.count(types) !== seen) continue;
      await this.wakeups.waitFor(types, Math.min(left, recheckMs ?? left), signal);
    }
  }

  /** A lease the agent never received (its call was cancelled, or preparing the payload failed):
   *  back to the front of the queue, the attempt not counted. A task whose payload cannot be
   *  prepared again and again fails for good instead of going round forever. */
  async handBack(task: TaskRow, reason: string, opts: { prepareFailed?: boolean } = {}): Promise<void> {
    let failed: TaskRow | undefined;
    let cancelled: TaskRow | undefined;
    await this.tx(async (c) => {
      const locked = await this.lockLeased(c, task.id, task.leaseToken ?? '');
      if (opts.prepareFailed) {
        await this.event(task.id, task.leasedBy, 'prepare_failed', reason, c);
        const tries = (
          await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM task_events WHERE task_id = $1 AND kind = 'prepare_failed'`, [
            task.id,
          ])
        ).rows[0].n;
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
    this.log.warn('lease handed back', {
      taskId: task.id,
      type: task.type,
      agentId: task.leasedBy,
      reason,
      failedForGood: !!failed,
      ...requestIdOf(task),
    });
  }

  /** Locks the task and checks the caller still holds its lease. */
  private async lockLeased(c: Queryable, id: string, token: string): Promise<TaskRow> {
    await this.families.lockParentOf(c, id);
    const res = await c.query<TaskRow>(`SELECT ${TASK_COLUMNS} FROM tasks WHERE id = $1 FOR UPDATE`, [id]);
    const task: TaskRow | undefined = res.rows[0];
    if (!task || task.state !== TASK_STATES.leased || task.leaseToken !== token) throw leaseLost(id);
    return task;
  }

  /** Progress doubles as heartbeat: it extends the lease. Progress never goes back. */
  async progress(
    id: string,
    token: string,
    progress: number,
    stage: string | null,
    message?: string,
    facts?: unknown,
  ): Promise<{ cancelRequested: boolean }> {
    const clamped = Math.max(0, Math.min(1, Number.isFinite(progress) ? progress : 0));
    try {
      return await this.recordProgress(id, token, clamped, stage, message, facts);
    } catch (err) {
      if (err instanceof ContractViolation) return this.refuse(id, token, err.message);
      const refusal = appErrorOf(err);
      if (refusal?.error === LEASE_LOST || isTransientDbError(err)) throw err;
      if (!refusal) {
        // Anything else (a constraint the report breaks, a bug in a domain hook) would fail every
        // heartbeat the same way until the lease ran out, attempt after attempt, and end as "agents
        // stopped responding": the task fails now, saying the coordinator could not store the report.
        this.log.error('task progress report could not be stored', { taskId: id, err });
        await this.fail(
          id,
          token,
          "The coordinator could not store the agent's report on this task (an internal error)",
          false,
          'REPORT_REJECTED',
        );
        return { cancelRequested: true };
      }
      // The handler refused the task on what the agent reported (say, not enough credits for the
      // video's length): that is final, and the agent stops on this answer.
      await this.fail(id, token, refusal.message, false, 'REFUSED');
      return { cancelRequested: true };
    }
  }

  private async recordProgress(
    id: string,
    token: string,
    clamped: number,
    stage: string | null,
    message?: string,
    facts?: unknown,
  ): Promise<{ cancelRequested: boolean }> {
    return this.tx(async (c) => {
      const task = await this.lockLeased(c, id, token);
      const stageNow = laterStage(task.type, task.stage, stage);
      const res = await c.query<{ progress: number; cancelRequested: boolean }>(
        `UPDATE tasks SET progress = GREATEST(progress, $2), stage = $3,
           lease_expires_at = now() + make_interval(secs => $4 / 1000.0)
         WHERE id = $1 RETURNING progress, cancel_requested AS "cancelRequested"`,
        [id, clamped, stageNow, this.opts.leaseTtlMs],
      );
      const row = res.rows[0];
      if (!task.parentId) await this.handler(task.type).onProgress?.(c, task, row.progress, stageNow, facts);
      // A child's report is its parent's too: the parent's stage and progress follow it (./fan-out.ts).
      else await this.families.childProgressed(c, task);
      if (message) this.log.debug('task progress', { taskId: id, progress: row.progress, stage, message });
      return { cancelRequested: row.cancelRequested };
    });
  }

  /** Stores the result with the domain's rows. A deadlock or dropped connection is retried here and,
   *  if it persists, answered as unavailable so the agent retries: finished work is never thrown away
   *  for a database hiccup. */
  async complete(id: string, token: string, result: unknown): Promise<void> {
    let task: TaskRow | undefined;
    const transient = (err: unknown, attempt: number) => {
      this.log.warn('task completion hit a transient database error', { taskId: id, attempt, err: (err as Error).message });
    };
    try {
      await retry(
        async () => {
          task = undefined;
          let outcome = TASK_STATES.completed as FinishOutcome | 'waiting';
          await this.tx(async (c) => {
            task = await this.lockLeased(c, id, token);
            outcome = await this.completeLeased(c, task, result);
          });
          if (outcome !== 'waiting') this.finished(task!, outcome);
        },
        { ...COMPLETE_RETRY, retryable: isTransientDbError, onRetry: transient },
      );
    } catch (err) {
      if (err instanceof AppError && err.error === LEASE_LOST) throw err;
      if (err instanceof ContractViolation) return this.refuse(id, token, err.message);
      if (isTransientDbError(err)) {
        transient(err, COMPLETE_RETRY.tries);
        throw new AppError(503, 'unavailable', 'The result could not be stored just now; retry');
      }
      if (!task) throw err;
      // The result could not be accepted (for example a short past the video's end): that is final.
      const refusal = appErrorOf(err);
      const reason = refusal ? refusal.message : 'The result could not be stored';
      if (!refusal) this.log.error('task result rejected', { taskId: id, err });
      // A 403 is the organization's own limit (its storage filled while the work ran): the domain
      // charges for the work done rather than giving it away.
      await this.fail(id, token, reason, false, refusal?.status === 403 ? 'OVER_PLAN_LIMIT' : 'RESULT_REJECTED');
    }
  }

  /** The agent's result for a task it holds: a child's goes to its parent (./fan-out.ts); a task
   *  whose domain splits it waits for its children; any other completes with its domain's rows. */
  private async completeLeased(c: Queryable, task: TaskRow, result: unknown): Promise<FinishOutcome | 'waiting'> {
    const markCompleted = () =>
      c.query(
        `UPDATE tasks SET state = 'completed', result = $2, progress = 1, lease_token = NULL, lease_expires_at = NULL,
         waiting_reason = NULL, finished_at = now() WHERE id = $1`,
        [task.id, result],
      );
    if (task.parentId) {
      await markCompleted();
      await this.event(task.id, task.leasedBy, 'completed', null, c);
      await this.families.childCompleted(c, task);
      return TASK_STATES.completed;
    }
    const handler = this.handler(task.type);
    const children = handler.fanOut ? await handler.fanOut(c, task, result) : [];
    if (children.length && task.cancelRequested) {
      // Asked to stop while its own part ran: nothing more is started for it.
      const outcome = await this.failForGood(c, task, 'Cancelled', 'CANCELLED');
      await this.event(task.id, task.leasedBy, 'cancelled', 'cancelled before its child tasks started', c);
      return outcome;
    }
    if (children.length) {
      await this.families.split(c, task, result, children);
      return 'waiting';
    }
    await markCompleted();
    await handler.onComplete(c, task, result);
    await this.event(task.id, task.leasedBy, 'completed', null, c);
    return TASK_STATES.completed;
  }

  /** A failure the agent reports. Retryable ones go back to the queue until attempts run out. */
  async fail(
    id: string,
    token: string,
    reason: string,
    retryable: boolean,
    code: TaskFailureCode = 'TASK_FAILED',
  ): Promise<{ willRetry: boolean }> {
    let task!: TaskRow;
    let ended: FinishOutcome | undefined;
    await this.tx(async (c) => {
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
    await this.tx(async (c) => {
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
  async requeue(c: Queryable, task: TaskRow, reason: string, why: Requeue): Promise<'requeued' | 'cancelled'> {
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
    await this.wakeups.notify(c, task.type);
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
    const outcome = await this.tx(async (c): Promise<CancelOutcome> => {
      await this.families.lockParentOf(c, id);
      const task: TaskRow | undefined = (await c.query<TaskRow>(`SELECT ${TASK_COLUMNS} FROM tasks WHERE id = $1 FOR UPDATE`, [id]))
        .rows[0];
      if (!task) return 'not_found';
      if (task.state === TASK_STATES.queued || task.state === TASK_STATES.waiting) {
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

  /** One transaction over the task tables. The steps below that take a Queryable (requeue,
   *  failForGood, event) and `finished` are the queue's own, shared with its watchdog; domains use
   *  the public calls above. */
  async tx<T>(fn: (c: Queryable) => Promise<T>): Promise<T> {
    let ended: Array<{ task: TaskRow; outcome: FinishOutcome }> = [];
    const out = await this.db.tx(async (c) => {
      ended = [];
      this.endedInTx.set(c, ended);
      try {
        return await fn(c);
      } finally {
        this.endedInTx.delete(c);
      }
    });
    for (const e of ended) this.finished(e.task, e.outcome);
    return out;
  }

  /** A child's parent is locked before the child, everywhere (./fan-out.ts). */
  lockParentOf(c: Queryable, id: string): Promise<void> {
    return this.families.lockParentOf(c, id);
  }

  /** Another task ends in this transaction (see endedInTx). */
  endsWith(c: Queryable, task: TaskRow, outcome: FinishOutcome): void {
    const ended = this.endedInTx.get(c);
    if (!ended) throw new Error('endsWith outside TaskQueue.tx');
    ended.push({ task, outcome });
  }

  /** The lease watchdog's pass (./lease-watchdog.ts); called on a timer and by tests. */
  tick(): Promise<number> {
    return this.watchdog.tick();
  }

  /** Ends the task as failed, or as cancelled when that is why it ends; says which. */
  async failForGood(
    c: Queryable,
    task: TaskRow,
    reason: string,
    code: TaskFailureCode,
  ): Promise<typeof TASK_STATES.failed | typeof TASK_STATES.cancelled> {
    const state = code === 'CANCELLED' ? TASK_STATES.cancelled : TASK_STATES.failed;
    await c.query(
      `UPDATE tasks SET state = $3, last_error = $2, lease_token = NULL, lease_expires_at = NULL, waiting_reason = NULL,
         finished_at = now() WHERE id = $1`,
      [task.id, reason, state],
    );
    if (task.state === TASK_STATES.waiting) await this.families.endChildren(c, task, reason);
    if (task.parentId) await this.families.childEnded(c, task, reason, code);
    else await this.handler(task.type).onFailed(c, task, reason, code);
    return state;
  }

  finished(task: TaskRow, outcome: FinishOutcome): void {
    this.metrics.tasksFinished.labels(task.type, outcome).inc();
    if (task.startedAt)
      this.metrics.taskDuration.labels(task.type, outcome).observe((Date.now() - new Date(task.startedAt).getTime()) / 1000);
    this.log.info('task finished', { taskId: task.id, type: task.type, outcome, ...requestIdOf(task) });
    // A child's outcome is its parent's business; the parent's own finish runs the domain's hook.
    const after = task.parentId ? undefined : this.handler(task.type).afterFinish;
    const domainOutcome = outcome === TASK_STATES.completed ? 'completed' : 'failed';
    if (after) after(task, domainOutcome).catch((err) => this.log.error('after-finish hook failed', { taskId: task.id, err }));
  }

  async event(taskId: string, agentId: string | null, kind: string, detail: string | null, c: Queryable = this.db.pool): Promise<void> {
    await c.query('INSERT INTO task_events (task_id, agent_id, kind, detail) VALUES ($1, $2, $3, $4)', [taskId, agentId, kind, detail]);
  }
}

/** Where a task's uploads land; the whole prefix is removed when the task fails for good. */
export const taskObjectPrefix = (task: Pick<TaskRow, 'id' | 'organizationId'>) =>
  `orgs/${task.organizationId ?? 'system'}/tasks/${task.id}/`;
export const taskObjectKey = (task: Pick<TaskRow, 'id' | 'organizationId'>, name: string) => taskObjectPrefix(task) + name;

/** The requestId of the API request running now (api/request-id.ts), for the tasks it queues. */
function requestIdInScope(): string | null {
  const id = logFields()?.requestId;
  return typeof id === 'string' ? id : null;
}

/** A task's requestId as a log field, when an API request queued it. */
const requestIdOf = (task: TaskRow): { requestId?: string } => (task.requestId ? { requestId: task.requestId } : {});
