import type { Queryable } from '../db/db.js';
import { newId } from '../ids.js';
import { TASK_STATES, type TaskType } from '@shorts/common/tasks';
import { childTypesOf, laterStage, localityOf, partNameOf, placementOf, stageWhileChildren } from '@shorts/common/tasks/contracts';
import type { TaskFailureCode } from '@shorts/common/tasks/failure-codes';
import type { Metrics } from '../metrics/metrics.js';
import { TASK_COLUMNS, type TaskRow } from './task-row.js';
import type { ChildTask, QueueCore, TaskOutcomeHandler } from './queue-core.js';
import type { TaskWakeups } from './wakeups.js';

/**
 * Fan-out and fan-in. A task whose domain splits it (its handler's fanOut) waits, its own result
 * stored, while its children run as ordinary tasks: leased by capability, in its organization's fair
 * share, re-leased when their agent is lost. Each child's completion locks the parent and counts
 * down; the last one joins the results (fanIn) and completes the parent with its domain's rows in
 * its own transaction, so the parent completes once however the children race. A child that fails
 * for good fails the parent with its reason, and a parent that ends otherwise ends its children.
 * Children report to the parent, never to a domain: their domain hooks (onProgress, onComplete,
 * onFailed, afterFinish) do not run; prepareLease does, as for any task an agent takes.
 *
 * A parent may split more than once, one child type a round (a long analysis: its ranges, then its
 * shorts): a round's children are its parent's children of that type, numbered after the earlier
 * rounds', and only they count down, join and show progress.
 *
 * Lock order, everywhere: the parent, then the child (lockParentOf first).
 */
export class TaskFamilies {
  constructor(
    private readonly opts: { maxAttempts: number },
    private readonly metrics: Metrics,
    private readonly wakeups: TaskWakeups,
    private readonly queue: QueueCore,
  ) {}

  /** A handler may fan out only where its type's contract says which children it has. */
  static check(type: TaskType, handler: TaskOutcomeHandler): void {
    if (!handler.fanOut && !handler.fanIn) return;
    if (!childTypesOf(type).length) throw new Error(`${type} handler fans out, but the ${type} contract declares no children`);
    if (!handler.fanOut || !(handler.fanIn || handler.finishOnAgent))
      throw new Error(`${type} handler needs fanOut, and fanIn or finishOnAgent`);
  }

  /** Locks the task's parent, if it has one, so that the task's own lock comes second. */
  async lockParentOf(c: Queryable, id: string): Promise<void> {
    await c.query(`SELECT id FROM tasks WHERE id = (SELECT parent_id FROM tasks WHERE id = $1) FOR UPDATE`, [id]);
  }

  /** The parent's own part is done: it waits for the children, who join the queue now. */
  async split(c: Queryable, parent: TaskRow, ownResult: unknown, children: ChildTask[]): Promise<void> {
    const type = children[0]!.type;
    if (!childTypesOf(parent.type).includes(type) || children.some((child) => child.type !== type))
      throw new Error(
        `a ${parent.type} task splits into children of one of its contract's types a round, not ${children.map((ch) => ch.type).join(', ')}`,
      );
    // Numbered after an earlier round's children, which stay with their results.
    const { earlier } = (await c.query<{ earlier: number }>(`SELECT count(*)::int AS earlier FROM tasks WHERE parent_id = $1`, [parent.id]))
      .rows[0]!;
    await c.query(
      `UPDATE tasks SET state = 'waiting', result = $2, children_pending = $3, lease_token = NULL, lease_expires_at = NULL,
         waiting_reason = NULL WHERE id = $1`,
      [parent.id, ownResult, children.length],
    );
    for (const [index, child] of children.entries()) {
      const needs = placementOf(type, child.placement);
      await c.query(
        `INSERT INTO tasks (id, type, organization_id, subject_id, payload, priority, max_attempts, requires, prefers, parent_id, child_index,
           request_id, locality)
         SELECT $1, $2, organization_id, subject_id, $3, priority, $4, $5, $6, id, $7, request_id, $9 FROM tasks WHERE id = $8`,
        [
          newId(),
          type,
          child.payload,
          this.opts.maxAttempts,
          needs.requires,
          needs.prefers,
          earlier + index,
          parent.id,
          localityOf(type, child.payload),
        ],
      );
    }
    this.metrics.tasksEnqueued.labels(type).inc(children.length);
    this.metrics.fanOuts.labels(parent.type).inc();
    this.metrics.childTasks.labels(type).inc(children.length);
    await this.wakeups.notify(c, type);
    await this.queue.event(parent.id, parent.leasedBy, 'fanned_out', `${children.length} ${type} child tasks`, c);
  }

  /** A child completed (its row is stored); the last one completes the parent. */
  async childCompleted(c: Queryable, child: TaskRow): Promise<void> {
    const parent = await this.lockedWaitingParent(c, child);
    // The parent ended already (a sibling failed, it was cancelled): the result stays on the child.
    if (!parent) return;
    const { pending } = (
      await c.query<{ pending: number }>(
        `UPDATE tasks SET children_pending = children_pending - 1 WHERE id = $1 RETURNING children_pending AS pending`,
        [parent.id],
      )
    ).rows[0];
    // The parent's progress follows its children's, the last one's completion included.
    await this.childProgressed(c, child);
    if (pending > 0) return;
    const handler = this.queue.handlerOf(parent.type);
    const childResults = (
      await c.query<{ result: unknown }>(`SELECT result FROM tasks WHERE parent_id = $1 AND type = $2 ORDER BY child_index`, [
        parent.id,
        child.type,
      ])
    ).rows.map((r) => r.result);
    const round = { type: child.type, results: childResults };
    const payload = handler.finishOnAgent ? await handler.finishOnAgent(c, parent, parent.result, round) : undefined;
    if (payload) {
      // The join needs an agent: the parent is queued again for its final part, with fresh attempts.
      await c.query(
        `UPDATE tasks SET state = 'queued', payload = $2, result = NULL, attempts = 0, queued_at = now(), leased_by = NULL
         WHERE id = $1`,
        [parent.id, payload],
      );
      await this.wakeups.notify(c, parent.type);
      await this.queue.event(parent.id, null, 'children_done', `${childResults.length} child tasks; the final part is queued`, c);
      return;
    }
    if (!handler.fanIn) throw new Error(`${parent.type} has no join for its ${child.type} children`);
    const result = await handler.fanIn(c, parent, parent.result, round);
    if (handler.joinsOnAgent?.(result)) return this.queueJoin(c, parent, result, childResults.length);
    await c.query(`UPDATE tasks SET state = 'completed', result = $2, progress = 1, finished_at = now() WHERE id = $1`, [
      parent.id,
      result,
    ]);
    await handler.onComplete(c, parent, result);
    await this.queue.event(parent.id, null, 'completed', `after ${childResults.length} child tasks`, c);
    this.queue.endsWith(c, parent, TASK_STATES.completed);
  }

  /** The children are done and their results joined, for an agent to finish: the parent goes back
   *  to the queue (at its old place in line, its attempts counted afresh) with that joined result. */
  private async queueJoin(c: Queryable, parent: TaskRow, result: unknown, children: number): Promise<void> {
    await c.query(`UPDATE tasks SET state = 'queued', result = $2, children_pending = 0, attempts = 0, leased_by = NULL WHERE id = $1`, [
      parent.id,
      result,
    ]);
    await this.wakeups.notify(c, parent.type);
    await this.queue.event(parent.id, null, 'joining', `${children} child tasks done; an agent joins their results`, c);
  }

  /** A child moved on: its parent's progress follows all of its children's (a completed one counts
   *  whole), and the parent's domain shows it (and may name the parent's own progress). Runs with the
   *  parent locked. */
  async childProgressed(c: Queryable, child: TaskRow): Promise<void> {
    const parent = await this.lockedWaitingParent(c, child);
    if (!parent) return;
    const handler = this.queue.handlerOf(parent.type);
    // The parent is in the stage its contract names for this round's children, and its domain hears
    // so as it hears its own reports (a job names the stage whatever task does the work).
    const stage = laterStage(parent.type, parent.stage, stageWhileChildren(parent.type, child.type) ?? null);
    if (stage !== parent.stage) {
      await c.query(`UPDATE tasks SET stage = $2 WHERE id = $1`, [parent.id, stage]);
      await handler.onProgress?.(c, { ...parent, stage }, parent.progress, stage);
    }
    if (!handler.onChildrenProgress) return;
    const { fraction } = (
      await c.query<{ fraction: number }>(
        `SELECT COALESCE(avg(CASE WHEN state = 'completed' THEN 1 ELSE progress END), 0)::float8 AS fraction
           FROM tasks WHERE parent_id = $1 AND type = $2`,
        [parent.id, child.type],
      )
    ).rows[0];
    const progress = await handler.onChildrenProgress(c, parent, child.type, fraction);
    if (typeof progress === 'number')
      await c.query(`UPDATE tasks SET progress = GREATEST(progress, $2) WHERE id = $1`, [parent.id, progress]);
  }

  /** A child failed for good (or was cancelled): so does its parent, with the child's reason. */
  async childEnded(c: Queryable, child: TaskRow, reason: string, code: TaskFailureCode): Promise<void> {
    const parent = await this.lockedWaitingParent(c, child);
    if (!parent) return;
    const { part } = (
      await c.query<{ part: number }>(`SELECT count(*)::int AS part FROM tasks WHERE parent_id = $1 AND type = $2 AND child_index <= $3`, [
        parent.id,
        child.type,
        child.childIndex,
      ])
    ).rows[0]!;
    const why = code === 'CANCELLED' ? reason : `${partNameOf(child.type)} ${part} failed: ${reason}`;
    const outcome = await this.queue.failForGood(c, parent, why, code);
    await this.queue.event(parent.id, null, outcome === TASK_STATES.cancelled ? 'cancelled' : 'failed', why, c);
    this.queue.endsWith(c, parent, outcome);
  }

  /** The parent ended before its children: queued ones end at once, running ones are asked to stop
   *  (their agents learn on their next report; whatever they then send changes nothing). */
  async endChildren(c: Queryable, parent: TaskRow, reason: string): Promise<void> {
    const why = `Its parent task ended: ${reason}`;
    await c.query(
      `UPDATE tasks SET state = 'cancelled', last_error = $2, waiting_reason = NULL, finished_at = now()
       WHERE parent_id = $1 AND state = 'queued'`,
      [parent.id, why],
    );
    await c.query(`UPDATE tasks SET cancel_requested = true WHERE parent_id = $1 AND state = 'leased'`, [parent.id]);
  }

  private async lockedWaitingParent(c: Queryable, child: TaskRow): Promise<TaskRow | undefined> {
    const parent: TaskRow | undefined = (
      await c.query<TaskRow>(`SELECT ${TASK_COLUMNS} FROM tasks WHERE id = $1 FOR UPDATE`, [child.parentId])
    ).rows[0];
    return parent?.state === TASK_STATES.waiting ? parent : undefined;
  }
}
