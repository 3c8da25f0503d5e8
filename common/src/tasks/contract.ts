import { z } from 'zod';
import type { Word } from '../text/transcript.js';
import type { TaskPlacement } from '../placement.js';
import type { TaskType } from '../tasks.js';

// The shape every task type's contract takes (one file per type next to this one). Both sides import
// the contract: the coordinator builds payloads of its type and refuses facts and results that do not
// parse; the agent parses the payload it leased and returns results of its type.

/** What a host must have to run a task type; the agent checks each at start. */
export type HostNeed = 'ffmpeg' | 'speech-recognition' | 'face-detector';

/** Where a stage sits in the task's own 0..1 progress: it starts at `start` and ends at `end`. */
export interface StageSpan {
  start: number;
  end: number;
}

export interface TaskContract<
  Payload extends z.ZodType,
  Lease extends z.ZodType,
  Facts extends z.ZodType,
  Result extends z.ZodType,
  Stage extends string,
> {
  /** What the coordinator stores with the task. */
  payload: Payload;
  /** What the agent receives: the payload plus what must be fresh at lease time (signed URLs). */
  leasePayload: Lease;
  /** What the agent may tell the coordinator before the task ends (ReportProgress facts_json). */
  facts: Facts;
  /** What CompleteTask carries (result_json). */
  result: Result;
  stages: Record<Stage, StageSpan>;
  /** What the agent's host must have; it checks at start and does not take the type without. */
  needs: readonly HostNeed[];
  /** Which agents the lease query offers the task to (common/src/placement.ts): tags an agent must
   *  have, and tags that make it the better choice. */
  placement: TaskPlacement;
  /** Default wall-clock limit of one attempt (TASK_TIME_LIMITS overrides it): the agent stops the
   *  task past it, and the coordinator takes it back from an agent that does not. */
  timeLimitSec: number;
  /** Locality: a task of this type reads its job's stored source whole (its payload's `jobId`) and
   *  leaves it in its agent's object cache, so the lease query holds the job's next such task a
   *  moment for an agent that ran one (coordinator/src/tasks/locality.ts). A function: only the
   *  tasks of the type whose payload says so read it whole. */
  readsJobSource?: boolean | ((payload: Record<string, unknown>) => boolean);
  /** Fan-out: the types of the child tasks this type may split into, one type a round. The domain's
   *  handler decides from the task's own result whether to split (fanOut) and joins the children's
   *  results into the task's (fanIn) or hands them to an agent (finishOnAgent), whose result may split
   *  again into children of another type; the queue runs the children as ordinary tasks and
   *  completes the parent once, after the last round's last child (coordinator/src/tasks/fan-out.ts).
   *  `stages` names the parent's own stage while children of each type run: a waiting parent says
   *  what its children do, since their reports are the only ones made for it then. */
  children?: { types: readonly TaskType[]; stages: Partial<Record<TaskType, Stage>> };
  /** What a task of this type is as a child, in its parent's failure ("Range 2 failed: ..."). */
  partName?: string;
  /** The objects a task of this type stores (see TaskOutputs). */
  outputs: TaskOutputs;
}

/**
 * The names a task type stores its outputs under, declared once beside its contract: the agent names
 * each upload with the type's name functions (`<type>Outputs` in its file), the coordinator signs upload
 * URLs only for names `pattern` matches and refuses a result that reports any other object. The pattern
 * admits only extensions the type writes: `/objects/` serves a key with the content type of its
 * extension, so an agent free to name `x.svg` or `x.html` would have a page of its own served from the
 * coordinator's origin.
 */
export interface TaskOutputs {
  /** Every name the type may store under. */
  pattern: RegExp;
  /** Each output's name, or the function that makes it (from an id or an index). */
  [output: string]: RegExp | string | ((...args: never[]) => string);
}

/** A type that stores no objects (its result carries everything). An upload name is never empty, so
 *  no name matches. */
export const NO_OUTPUTS: TaskOutputs = { pattern: /^$/ };

/** The task fraction at `fraction` (0..1) of the way through `stage`. */
export function stageProgress<S extends string>(stages: Record<S, StageSpan>, stage: S, fraction = 0): number {
  const { start, end } = stages[stage];
  return start + Math.max(0, Math.min(1, fraction)) * (end - start);
}

/** A stored object an agent uploaded and names in its result. */
export const storedObjectSchema = z.object({
  objectKey: z.string().min(1),
  sizeBytes: z.number().int().nonnegative(),
  contentType: z.string().min(1),
  thumbnailKey: z.string().min(1).nullish(),
});
export type StoredObject = z.output<typeof storedObjectSchema>;

/** No facts: this task type reports none. */
export const noFactsSchema = z.object({}).strict();

/** A transcript word with its timing (the shape of `Word` in text/transcript.ts, pinned below). */
export const wordSchema = z.object({
  text: z.string(),
  start: z.number().finite(),
  end: z.number().finite(),
  confidence: z.number().finite().optional(),
});
const wordSchemaMatchesWord: [Same<z.output<typeof wordSchema>, Word>] = [true];
void wordSchemaMatchesWord;

/** True when A and B are the same type; a schema pinned to an interface with it cannot drift from it. */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
