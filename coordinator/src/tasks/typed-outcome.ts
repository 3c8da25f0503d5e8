import type { Queryable } from '../db/db.js';
import type { TaskType } from '@shorts/common/tasks';
import type { TaskPlacement } from '@shorts/common/placement';
import type { TaskFailureCode } from '@shorts/common/tasks/failure-codes';
import {
  childTypesOf,
  parseStoredPayload,
  parseTaskFacts,
  parseTaskResult,
  type TaskChildType,
  type TaskFacts,
  type TaskLeasePayload,
  type TaskPayload,
  type TaskResult,
} from '@shorts/common/tasks/contracts';
import type { ChildResults, TaskOutcomeHandler } from './queue-core.js';
import type { TaskRow } from './task-row.js';

/** A task as its domain sees it: its payload read through its type's contract. */
export type TypedTaskRow<T extends TaskType> = Omit<TaskRow, 'type' | 'payload'> & { type: T; payload: TaskPayload<T> };

/** A child task in its type's own terms. */
export type TypedChildTask<C extends TaskType> = C extends TaskType
  ? { type: C; payload: TaskPayload<C>; placement?: Partial<TaskPlacement> }
  : never;

/** One round's children's results (in child order), in their type's own terms. */
export type TypedChildResults<C extends TaskType> = C extends TaskType ? { type: C; results: TaskResult<C>[] } : never;

/** A domain's side of one task type, in that type's own terms (common/src/tasks/<type>.ts). */
export interface TypedOutcomeHandler<T extends TaskType> {
  /** Throwing an AppError refuses the task for good with its message (the agent is told to cancel). */
  onProgress?(c: Queryable, task: TypedTaskRow<T>, progress: number, stage: string | null, facts?: TaskFacts<T>): Promise<void>;
  onComplete(c: Queryable, task: TypedTaskRow<T>, result: TaskResult<T>): Promise<void>;
  onFailed(c: Queryable, task: TypedTaskRow<T>, reason: string, code: TaskFailureCode): Promise<void>;
  /** The payload an agent receives: the stored one (`task.payload`) with what must be fresh when an
   *  agent takes the task (signed URLs). Without it the agent gets the stored payload. */
  prepareLease?(task: TypedTaskRow<T>, payload: TaskPayload<T>): Promise<TaskLeasePayload<T>>;
  afterFinish?(task: TypedTaskRow<T>, outcome: 'completed' | 'failed'): Promise<void>;
  /** Fan-out, for a type whose contract declares `children`: the children this task splits into,
   *  from its own agent's result (none: it completes at once). */
  fanOut?(c: Queryable, parent: TypedTaskRow<T>, result: TaskResult<T>): Promise<TypedChildTask<TaskChildType<T>>[]>;
  /** Fan-in: the parent's result from its own and its children's (one round's, in child order). */
  fanIn?(
    c: Queryable,
    parent: TypedTaskRow<T>,
    result: TaskResult<T>,
    children: TypedChildResults<TaskChildType<T>>,
  ): Promise<TaskResult<T>>;
  /** The joined result is work for an agent: the parent is queued again with it (./fan-out.ts). */
  joinsOnAgent?(result: TaskResult<T>): boolean;
  /** Instead of fanIn, when a round's join needs an agent: the payload of the parent's final part
   *  (undefined: fanIn joins this round). */
  finishOnAgent?(
    c: Queryable,
    parent: TypedTaskRow<T>,
    result: TaskResult<T>,
    children: TypedChildResults<TaskChildType<T>>,
  ): Promise<TaskPayload<T> | undefined>;
  /** The children's progress (0..1 over all of them): the domain's to show; a number returned is the
   *  parent's own progress to store. */
  onChildrenProgress?(c: Queryable, parent: TypedTaskRow<T>, childType: TaskType, fraction: number): Promise<number | void>;
}

/** The task with its payload read through the contract of `type` when the domain first reads it: a
 *  domain that never does (most failure handlers) neither pays for the parse nor fails on it. A
 *  stored payload that does not parse throws ContractViolation there. */
function typedTask<T extends TaskType>(type: T, task: TaskRow): TypedTaskRow<T> {
  let payload: TaskPayload<T> | undefined;
  return {
    ...task,
    type,
    get payload(): TaskPayload<T> {
      return (payload ??= parseStoredPayload(type, task.payload));
    },
  };
}

/** The queue's handler for a task type: reads what the agent reported through the type's contract
 *  (a report that does not parse throws ContractViolation, which the queue refuses) and hands the
 *  domain typed values. */
export function withContract<T extends TaskType>(type: T, domain: TypedOutcomeHandler<T>): TaskOutcomeHandler {
  const { onProgress, prepareLease, afterFinish, fanOut, fanIn, joinsOnAgent, finishOnAgent, onChildrenProgress } = domain;
  const typed = (task: TaskRow) => typedTask(type, task);
  const childTypes = childTypesOf(type);
  // Children are checked against their own contract both ways: what the parent asks of them, and
  // what they bring back (a child result that does not parse refuses the last child's report).
  const typedChildren = (round: ChildResults) => {
    if (!childTypes.includes(round.type)) throw new Error(`${type} has no ${round.type} children`);
    return { type: round.type, results: round.results.map((r) => parseTaskResult(round.type, r)) } as TypedChildResults<TaskChildType<T>>;
  };
  return {
    onProgress: onProgress
      ? (c, task, progress, stage, facts) =>
          onProgress(c, typed(task), progress, stage, facts === undefined ? undefined : parseTaskFacts(type, facts))
      : undefined,
    onComplete: (c, task, result) => domain.onComplete(c, typed(task), parseTaskResult(type, result)),
    onFailed: (c, task, reason, code) => domain.onFailed(c, typed(task), reason, code),
    prepareLease: prepareLease
      ? async (task) => {
          const typedRow = typed(task);
          return prepareLease(typedRow, typedRow.payload);
        }
      : undefined,
    afterFinish: afterFinish ? (task, outcome) => afterFinish(typed(task), outcome) : undefined,
    fanOut: fanOut
      ? async (c, parent, result) =>
          (await fanOut(c, typed(parent), parseTaskResult(type, result))).map((child: TypedChildTask<TaskType>) => ({
            ...child,
            payload: parseStoredPayload(child.type, child.payload) as Record<string, unknown>,
          }))
      : undefined,
    fanIn: fanIn
      ? async (c, parent, result, round) => fanIn(c, typed(parent), parseTaskResult(type, result), typedChildren(round))
      : undefined,
    joinsOnAgent: joinsOnAgent ? (result) => joinsOnAgent(parseTaskResult(type, result)) : undefined,
    finishOnAgent: finishOnAgent
      ? async (c, parent, result, round) => {
          const payload = await finishOnAgent(c, typed(parent), parseTaskResult(type, result), typedChildren(round));
          return payload === undefined ? undefined : (parseStoredPayload(type, payload) as Record<string, unknown>);
        }
      : undefined,
    onChildrenProgress: onChildrenProgress
      ? (c, parent, childType, fraction) => onChildrenProgress(c, typed(parent), childType, fraction)
      : undefined,
  };
}
