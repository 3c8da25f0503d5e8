import type { Db } from '../db/db.js';
import type { Logger } from '@shorts/common/logger';
import { connectedAgentSql, markSilentAgentsOffline } from './liveness.js';
import { TASK_STATES, type TaskType } from '@shorts/common/tasks';
import { DEFAULT_TASK_TIME_LIMITS_SEC } from '@shorts/common/tasks/contracts';
import type { TaskFailureCode } from '@shorts/common/tasks/failure-codes';
import { describeTag, waitingMessage } from '@shorts/common/placement';
import type { Metrics, RequeueReason as Requeue, TaskOutcome as FinishOutcome } from '../metrics/metrics.js';
import { TASK_COLUMNS, type TaskRow } from './task-row.js';
import type { QueueCore, TaskQueueOptions } from './queue-core.js';

/** Why the watchdog takes a lease back from its agent. */
type TakeBack = Extract<Requeue, 'lease_expired' | 'time_limit'>;

const formatLimit = (sec: number) => (sec % 3600 === 0 ? `${sec / 3600} h` : sec % 60 === 0 ? `${sec / 60} min` : `${sec} s`);

/** The queue's lease watchdog: what happens to tasks whose agent went silent or overran, and to work
 *  that no connected agent can take. Task state changes go through the queue's own steps. */
export class LeaseWatchdog {
  constructor(
    private readonly db: Db,
    private readonly opts: TaskQueueOptions,
    private readonly log: Logger,
    private readonly metrics: Metrics,
    private readonly queue: QueueCore,
  ) {}

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
    for (const [ids, why] of [
      [expired.map((r) => r.id), 'lease_expired'],
      [overdue, 'time_limit'],
    ] as const) {
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
    const taken = await this.queue.tx(async (c) => {
      await this.queue.lockParentOf(c, id);
      // Checked again under the lock: the agent may have finished, or the lease moved on, since the scan.
      const res = await c.query<TaskRow & { leaseExpired: boolean; runSec: number | null }>(
        `SELECT ${TASK_COLUMNS}, lease_expires_at < now() AS "leaseExpired", extract(epoch FROM now() - started_at)::float8 AS "runSec"
         FROM tasks WHERE id = $1 AND state = 'leased' FOR UPDATE SKIP LOCKED`,
        [id],
      );
      const task: (TaskRow & { leaseExpired: boolean; runSec: number | null }) | undefined = res.rows[0];
      if (!task) return false;
      const due = why === 'lease_expired' ? task.leaseExpired : (task.runSec ?? 0) > this.timeLimitSec(task.type) + this.timeLimitGraceSec;
      if (!due) return false;
      const limit = formatLimit(this.timeLimitSec(task.type));
      let reason: string;
      let final: { reason: string; code: TaskFailureCode };
      if (why === 'lease_expired') {
        this.metrics.leasesExpired.labels(task.type).inc();
        reason = `agent ${task.leasedBy} went silent past its lease`;
        final = { reason: `The task was lost ${task.attempts} times (agents stopped responding); giving up`, code: 'AGENT_LOST' };
      } else {
        reason = `agent ${task.leasedBy} kept the task past its time limit of ${limit} without stopping it; taken back`;
        const tries = task.attempts === 1 ? 'its only attempt' : `${task.attempts} attempts`;
        final = {
          reason: `The ${task.type} task ran past its time limit of ${limit} and its agent did not stop it (${tries}); giving up`,
          code: 'TIME_LIMIT',
        };
      }
      if (task.attempts >= task.maxAttempts && !task.cancelRequested) {
        ended = { task, outcome: await this.queue.failForGood(c, task, final.reason, final.code) };
        await this.queue.event(id, task.leasedBy, why, reason, c);
      } else if ((await this.queue.requeue(c, task, reason, why)) === 'cancelled') {
        ended = { task, outcome: TASK_STATES.cancelled };
      }
      const fields = { taskId: id, type: task.type, agentId: task.leasedBy, attempt: task.attempts };
      if (why === 'lease_expired') this.log.warn('lease expired', fields);
      else this.log.warn('lease taken back: past its time limit', { ...fields, limitSec: this.timeLimitSec(task.type) });
      return true;
    });
    if (ended) this.queue.finished(ended.task, ended.outcome);
    return taken;
  }

  /** Queued tasks an operator asked to cancel (admin CLI, from another process) finish here, with
   *  their domain's onFailed. */
  private async finishCancelledQueued(): Promise<void> {
    const asked = await this.db.query<{ id: string }>(`SELECT id FROM tasks WHERE state = 'queued' AND cancel_requested LIMIT 100`);
    for (const { id } of asked) {
      try {
        await this.queue.cancel(id);
      } catch (err) {
        this.log.error('lease watchdog: could not cancel a task', { taskId: id, err });
      }
    }
  }

  private async markSilentAgentsOffline(): Promise<void> {
    const gone = await markSilentAgentsOffline(this.db, this.opts.leaseTtlMs);
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
      `SELECT task_types AS "taskTypes", capability_tags AS tags FROM agents a
       WHERE ${connectedAgentSql('a', '$1')}`,
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
          if (task.waitingReason)
            await this.db.query(`UPDATE tasks SET waiting_reason = NULL WHERE id = $1 AND state = 'queued'`, [task.id]);
          continue;
        }
        const missing = ofType.length ? task.requires.filter((tag) => !ofType.some((a) => a.tags.includes(tag))) : [];
        if (ofType.length && task.waitedMs >= this.opts.unmetNeedsFailMs) {
          await this.failUnplaceable(task.id, missing, task.waitedMs);
          continue;
        }
        const reason = waitingMessage(task.type, missing);
        if (task.waitingReason === reason) continue;
        const marked = await this.db.query<{ id: string }>(
          `UPDATE tasks SET waiting_reason = $2 WHERE id = $1 AND state = 'queued' AND waiting_reason IS DISTINCT FROM $2 RETURNING id`,
          [task.id, reason],
        );
        if (marked.length) {
          this.log.warn('task waiting: no connected agent can run it', {
            taskId: task.id,
            type: task.type,
            reason,
            waitedSec: Math.round(task.waitedMs / 1000),
          });
        }
      } catch (err) {
        this.log.error('lease watchdog: could not mark a waiting task', { taskId: task.id, err });
      }
    }
  }

  private async failUnplaceable(id: string, missing: string[], waitedMs: number): Promise<void> {
    let failed: TaskRow | undefined;
    const reason = `No connected agent has ${missing.map(describeTag).join(' and ') || 'what this task needs'}; gave up after waiting ${Math.round(waitedMs / 1000)} s`;
    await this.queue.tx(async (c) => {
      await this.queue.lockParentOf(c, id);
      const task: TaskRow | undefined = (
        await c.query<TaskRow>(`SELECT ${TASK_COLUMNS} FROM tasks WHERE id = $1 AND state = 'queued' FOR UPDATE SKIP LOCKED`, [id])
      ).rows[0];
      if (!task) return;
      await this.queue.failForGood(c, task, reason, 'NO_CAPABLE_AGENT');
      await this.queue.event(id, null, 'failed', reason, c);
      failed = task;
    });
    if (failed) {
      this.log.error('task failed: no agent can run it', { taskId: id, type: failed.type, missing });
      this.queue.finished(failed, TASK_STATES.failed);
    }
  }
}
