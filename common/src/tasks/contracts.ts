import type { z } from 'zod';
import { TASK_TYPES, isTaskType, type TaskType } from '../tasks.js';
import { analyzeVideoContract } from './analyze-video.js';
import { analyzeRangeContract } from './analyze-range.js';
import { reframeShortContract } from './reframe-short.js';
import { probeMediaContract } from './probe-media.js';
import { renderShortContract } from './render-short.js';
import { renderChunkContract } from './render-chunk.js';
import type { CapabilityTag, TaskPlacement } from '../placement.js';
import type { StageSpan } from './contract.js';

/** Every task type's contract; the compiler checks none is missing. */
export const TASK_CONTRACTS = {
  'probe-media': probeMediaContract,
  'analyze-video': analyzeVideoContract,
  'analyze-range': analyzeRangeContract,
  'reframe-short': reframeShortContract,
  'render-short': renderShortContract,
  'render-chunk': renderChunkContract,
} as const satisfies Record<TaskType, unknown>;

type Contracts = typeof TASK_CONTRACTS;

/** Each type's wall-clock limit per attempt, from its contract. */
export const DEFAULT_TASK_TIME_LIMITS_SEC: Readonly<Record<TaskType, number>> = Object.freeze(
  Object.fromEntries(TASK_TYPES.map((t) => [t, TASK_CONTRACTS[t].timeLimitSec])) as Record<TaskType, number>,
);

/** TASK_TIME_LIMITS (`render-short=1800,probe-media=60`) over the contracts' defaults. Agents and
 *  coordinators read the same variable: the agent stops a task at its limit, the coordinator takes
 *  it back from an agent that did not (limit plus a grace). */
export function parseTaskTimeLimits(text: string): Record<TaskType, number> {
  const limits: Record<TaskType, number> = { ...DEFAULT_TASK_TIME_LIMITS_SEC };
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [type, sec] = part.split('=');
    if (!type || !isTaskType(type) || !(Number(sec) > 0)) throw new Error(`expected type=seconds with a known task type, got "${part}"`);
    limits[type] = Number(sec);
  }
  return limits;
}
/** A task's placement: its type's (from its contract) plus what the enqueue adds. */
export function placementOf(type: TaskType, extra: Partial<TaskPlacement> = {}): { requires: CapabilityTag[]; prefers: CapabilityTag[] } {
  const base: TaskPlacement = TASK_CONTRACTS[type].placement;
  const requires = [...new Set([...base.requires, ...(extra.requires ?? [])])].sort();
  // What is required need not also be preferred.
  const prefers = [...new Set([...base.prefers, ...(extra.prefers ?? [])])].filter((t) => !requires.includes(t)).sort();
  return { requires, prefers };
}

/** The locality a task of this type is queued with (coordinator/src/tasks/locality.ts): its job, when
 *  its type reads the job's stored source whole; else none. */
export function localityOf(type: TaskType, payload: Record<string, unknown>): string | null {
  const reads = (TASK_CONTRACTS[type] as { readsJobSource?: boolean | ((payload: Record<string, unknown>) => boolean) }).readsJobSource;
  const whole = typeof reads === 'function' ? reads(payload) : reads;
  return whole && typeof payload.jobId === 'string' ? payload.jobId : null;
}

export type TaskPayload<T extends TaskType> = z.output<Contracts[T]['payload']>;
export type TaskLeasePayload<T extends TaskType> = z.output<Contracts[T]['leasePayload']>;
export type TaskFacts<T extends TaskType> = z.output<Contracts[T]['facts']>;
export type TaskResult<T extends TaskType> = z.output<Contracts[T]['result']>;
/** The types of the children a task type may split into (its contract's `children`); never if none. */
export type TaskChildType<T extends TaskType> = Contracts[T] extends { children: { types: readonly (infer C extends TaskType)[] } }
  ? C
  : never;
/** The same at run time (empty if none). */
export const childTypesOf = (type: TaskType): readonly TaskType[] =>
  (TASK_CONTRACTS[type] as { children?: { types: readonly TaskType[] } }).children?.types ?? [];
/** The stages of a task type, in order (by where each starts in the task's progress). */
const stagesInOrder = (type: TaskType): string[] =>
  Object.entries(TASK_CONTRACTS[type].stages as Record<string, StageSpan>)
    .sort(([, a], [, b]) => a.start - b.start)
    .map(([name]) => name);
/** The first stage of each task type: what a task is in from its lease until its agent first reports. */
export const FIRST_STAGES: Record<TaskType, string> = Object.fromEntries(
  TASK_TYPES.map((type) => [type, stagesInOrder(type)[0]!]),
) as Record<TaskType, string>;
/** The later of two stages of a task type: a task's stage, like its progress, never goes back (a
 *  retried attempt or a parent's final part reports its early stages again). An unknown stage
 *  (not in the contract) counts as earliest. */
export function laterStage(type: TaskType, stored: string | null, reported: string | null): string | null {
  const order = stagesInOrder(type);
  if (!reported) return stored;
  if (!stored) return reported;
  return order.indexOf(reported) >= order.indexOf(stored) ? reported : stored;
}
/** A parent's own stage while its children of `childType` run (its contract's `children.stages`). */
export const stageWhileChildren = (parentType: TaskType, childType: TaskType): string | undefined =>
  (TASK_CONTRACTS[parentType] as { children?: { stages: Partial<Record<TaskType, string>> } }).children?.stages[childType];
/** What a task of this type is called as a child in its parent's failure ("Range 2 failed: ..."). */
export const partNameOf = (type: TaskType): string => (TASK_CONTRACTS[type] as { partName?: string }).partName ?? 'Part';
export type TaskStage<T extends TaskType> = keyof Contracts[T]['stages'] & string;

/** The schemas by type, typed so that indexing with a generic type keeps each one's own output. */
const SCHEMAS: {
  [T in TaskType]: {
    payload: z.ZodType<TaskPayload<T>>;
    leasePayload: z.ZodType<TaskLeasePayload<T>>;
    facts: z.ZodType<TaskFacts<T>>;
    result: z.ZodType<TaskResult<T>>;
  };
} = TASK_CONTRACTS;

/** A report from an agent that does not match its task type's contract. */
export class ContractViolation extends Error {
  constructor(
    readonly type: TaskType,
    readonly part: 'payload' | 'facts' | 'result',
    detail: string,
  ) {
    super(`${part} does not match the ${type} contract: ${detail}`);
  }
}

function parse<Out>(type: TaskType, part: ContractViolation['part'], schema: z.ZodType<Out>, raw: unknown): Out {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new ContractViolation(
      type,
      part,
      parsed.error.issues
        .slice(0, 5)
        .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
        .join('; '),
    );
  }
  return parsed.data;
}

/** The payload as stored by the coordinator. */
export const parseStoredPayload = <T extends TaskType>(type: T, raw: unknown): TaskPayload<T> =>
  parse(type, 'payload', SCHEMAS[type].payload, raw);
/** The payload as an agent receives it. */
/** The payload as an agent receives it (LeaseTask payload_json). */
export const parseTaskPayload = <T extends TaskType>(type: T, raw: unknown): TaskLeasePayload<T> =>
  parse(type, 'payload', SCHEMAS[type].leasePayload, raw);
/** ReportProgress facts_json. */
export const parseTaskFacts = <T extends TaskType>(type: T, raw: unknown): TaskFacts<T> => parse(type, 'facts', SCHEMAS[type].facts, raw);
/** CompleteTask result_json. */
export const parseTaskResult = <T extends TaskType>(type: T, raw: unknown): TaskResult<T> =>
  parse(type, 'result', SCHEMAS[type].result, raw);
