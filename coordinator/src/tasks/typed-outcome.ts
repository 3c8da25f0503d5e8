import type { Queryable } from '../db/db.js';
import type { TaskType } from '@shorts/common/tasks';
import type { TaskPlacement } from '@shorts/common/placement';
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

/** A child task in its type's own terms. */
export type TypedChildTask<C extends TaskType> = C extends TaskType
  ? { type: C; payload: TaskPayload<C>; placement?: Partial<TaskPlacement> }
  : never;

/** One round's children's results (in child order), in their type's own terms. */
export type TypedChildResults<C extends TaskType> = C extends TaskType ? { type: C; results: TaskResult<C>[] } : never;

/** A domain's side of one task type, in that type's own terms (common/src/tasks/<type>.ts). */
export interface TypedOutcomeHandler<T extends TaskType> {
  /** Throwing an AppError refuses the task for good with its message (the agent is told to cancel). */
  onProgress?(c: Queryable, task: TaskRow, progress: number, stage: string | null, facts?: TaskFacts<T>): Promise<void>;
  onComplete(c: Queryable, task: TaskRow, result: TaskResult<T>): Promise<void>;
  onFailed: TaskOutcomeHandler['onFailed'];
  /** The payload an agent receives: the stored one with what must be fresh when an agent takes the
   *  task (signed URLs). Without it the agent gets the stored payload. */
  prepareLease?(task: TaskRow, payload: TaskPayload<T>): Promise<TaskLeasePayload<T>>;
  afterFinish?: TaskOutcomeHandler['afterFinish'];
  /** Fan-out, for a type whose contract declares `children`: the children this task splits into,
   *  from its own agent's result (none: it completes at once). */
  fanOut?(c: Queryable, parent: TaskRow, result: TaskResult<T>): Promise<TypedChildTask<TaskChildType<T>>[]>;
  /** Fan-in: the parent's result from its own and its children's (one round's, in child order). */
  fanIn?(c: Queryable, parent: TaskRow, result: TaskResult<T>, children: TypedChildResults<TaskChildType<T>>): Promise<TaskResult<T>>;
  /** The joined result is work for an agent: the parent is queued again with it (./fan-out.ts). */
  joinsOnAgent?(result: TaskResult<T>): boolean;
  /** Instead of fanIn, when a round's join needs an agent: the payload of the parent's final part
   *  (undefined: fanIn joins this round). */
  finishOnAgent?(
    c: Queryable,
    parent: TaskRow,
    result: TaskResult<T>,
    children: TypedChildResults<TaskChildType<T>>,
  ): Promise<TaskPayload<T> | undefined>;
  /** The children's progress (0..1 over all of them): the domain's to show; a number returned is the
   *  parent's own progress to store. */
  onChildrenProgress?: TaskOutcomeHandler['onChildrenProgress'];
}

/** The queue's handler for a task type: reads what the agent reported through the type's contract
 *  (a report that does not parse throws ContractViolation, which the queue refuses) and hands the
 *  domain typed values. */
export function withContract<T extends TaskType>(type: T, domain: TypedOutcomeHandler<T>): TaskOutcomeHandler {
  const { onProgress, prepareLease, fanOut, fanIn, joinsOnAgent, finishOnAgent } = domain;
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
          onProgress(c, task, progress, stage, facts === undefined ? undefined : parseTaskFacts(type, facts))
      : undefined,
    onComplete: (c, task, result) => domain.onComplete(c, task, parseTaskResult(type, result)),
    onFailed: (c, task, reason, code) => domain.onFailed(c, task, reason, code),
    prepareLease: prepareLease ? async (task) => prepareLease(task, parseStoredPayload(type, task.payload)) : undefined,
    afterFinish: domain.afterFinish,
    fanOut: fanOut
      ? async (c, parent, result) =>
          (await fanOut(c, parent, parseTaskResult(type, result))).map((child: TypedChildTask<TaskType>) => ({
            ...child,
            payload: parseStoredPayload(child.type, child.payload) as Record<string, unknown>,
          }))
      : undefined,
    fanIn: fanIn ? async (c, parent, result, round) => fanIn(c, parent, parseTaskResult(type, result), typedChildren(round)) : undefined,
    joinsOnAgent: joinsOnAgent ? (result) => joinsOnAgent(parseTaskResult(type, result)) : undefined,
    finishOnAgent: finishOnAgent
      ? async (c, parent, result, round) => {
          const payload = await finishOnAgent(c, parent, parseTaskResult(type, result), typedChildren(round));
          return payload === undefined ? undefined : (parseStoredPayload(type, payload) as Record<string, unknown>);
        }
      : undefined,
    onChildrenProgress: domain.onChildrenProgress,
  };
}
