import type { Queryable } from '../db/db.js';
import type { TASK_STATES, TaskType } from '@shorts/common/tasks';
import type { TaskFailureCode } from '@shorts/common/tasks/failure-codes';
import type { TaskPlacement } from '@shorts/common/placement';
import type { RequeueReason as Requeue, TaskOutcome as FinishOutcome } from '../metrics/metrics.js';
import type { TaskRow } from './task-row.js';

// The task queue's shapes, and the steps of it its watchdog (./lease-watchdog.ts) and fan-out
// (./fan-out.ts) share: those take the queue as a QueueCore, so they need not import it back.

/** What a domain (jobs, renders, probes) does when one of its tasks moves. Runs inside the task's
 *  transaction, so the domain's rows and the task's state change together or not at all. Facts and
 *  results arrive as the agent sent them: domains read them through their task type's contract
 *  (./typed-outcome.ts), and a ContractViolation thrown here refuses the report. */
export interface TaskOutcomeHandler {
  /** Throwing an AppError refuses the task for good with its message (the agent is told to cancel). */
  onProgress?(c: Queryable, task: TaskRow, progress: number, stage: string | null, facts?: unknown): Promise<void>;
  onComplete(c: Queryable, task: TaskRow, result: unknown): Promise<void>;
  /** The task failed for good (bad input, too many lost leases, cancelled, no agent can run it). */
  onFailed(c: Queryable, task: TaskRow, reason: string, code: TaskFailureCode): Promise<void>;
  /** Adds what must be fresh when an agent takes the task (signed URLs) to the stored payload. */
  prepareLease?(task: TaskRow): Promise<Record<string, unknown>>;
  /** Runs after the transaction committed (webhooks, notifications). A cancelled task is 'failed' here. */
  afterFinish?(task: TaskRow, outcome: 'completed' | 'failed'): Promise<void>;
  /** Fan-out (./fan-out.ts; the type's contract declares its `children`): the child tasks this task
   *  splits into, decided from its own agent's result. None: it completes with that result at once. */
  fanOut?(c: Queryable, parent: TaskRow, result: unknown): Promise<ChildTask[]>;
  /** Fan-in: the parent's result from its own and its children's (this round's, in child order),
   *  before the parent's onComplete in the same transaction. */
  fanIn?(c: Queryable, parent: TaskRow, result: unknown, children: ChildResults): Promise<unknown>;
  /** True when the joined result is not the parent's last word but work for an agent: the parent
   *  is queued again with it (its prepareLease reads it from task.result) and completes, as any
   *  task, with that agent's result (fanOut then returns none). A render joins its chunks so. */
  joinsOnAgent?(result: unknown): boolean;

  /** Instead of fanIn, for a join only an agent can make: after the last child the parent goes back
   *  to the queue with this payload for its final part, whose completion ends it as any task's does
   *  (fanOut then sees that part's result: no children, or a next round of another type). Undefined:
   *  this round's join needs no agent, and fanIn makes it. */
  finishOnAgent?(c: Queryable, parent: TaskRow, result: unknown, children: ChildResults): Promise<Record<string, unknown> | undefined>;
  /** The children's progress, 0..1 over all of them (a completed child counts 1), as a child reports:
   *  its domain shows it, and a number returned is the parent's own progress to store. */
  onChildrenProgress?(c: Queryable, parent: TaskRow, childType: TaskType, fraction: number): Promise<number | void>;
}

/** One child task a parent splits into: one of the parent contract's `children.types`, the same
 *  for every child of one round. */
export interface ChildTask {
  type: TaskType;
  payload: Record<string, unknown>;
  /** Capabilities beyond the child type's own placement (say, an NVENC host for a chunk). */
  placement?: Partial<TaskPlacement>;
}

/** One round's children's results, in child order. */
export interface ChildResults {
  type: TaskType;
  results: unknown[];
}

export interface TaskQueueOptions {
  leaseTtlMs: number;
  maxAttempts: number;
  /** How long a task preferring a capability is kept for a connected agent that has it and a free slot. */
  preferGraceMs: number;
  /** How long the first queued task of a job that reads its source is kept for a connected agent
   *  that holds that source and has a free slot (./locality.ts). 0 or absent: no hold. */
  localityHoldMs?: number;
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

export type CancelOutcome = 'cancelled' | 'cancel_requested' | 'already_finished' | 'not_found';

/** The queue's own steps that its watchdog and fan-out call (TaskQueue implements them). */
export interface QueueCore {
  handlerOf(type: TaskType): TaskOutcomeHandler;
  requeue(c: Queryable, task: TaskRow, reason: string, why: Requeue): Promise<'requeued' | 'cancelled'>;
  cancel(id: string, reason?: string): Promise<CancelOutcome>;
  tx<T>(fn: (c: Queryable) => Promise<T>): Promise<T>;
  lockParentOf(c: Queryable, id: string): Promise<void>;
  endsWith(c: Queryable, task: TaskRow, outcome: FinishOutcome): void;
  failForGood(
    c: Queryable,
    task: TaskRow,
    reason: string,
    code: TaskFailureCode,
  ): Promise<typeof TASK_STATES.failed | typeof TASK_STATES.cancelled>;
  finished(task: TaskRow, outcome: FinishOutcome): void;
  event(taskId: string, agentId: string | null, kind: string, detail: string | null, c?: Queryable): Promise<void>;
}
