import type { Logger } from '@shorts/common/logger';
import type { TaskType } from '@shorts/common/tasks';
import type { TaskFacts, TaskLeasePayload, TaskResult, TaskStage } from '@shorts/common/tasks/contracts';
import type { TaskFailureCode } from '@shorts/common/tasks/failure-codes';
import type { AgentConfig } from '../config.js';
import type { HostCapabilities } from '../host/probe-host.js';
import type { AgentMetrics } from '../metrics/agent-metrics.js';

/** What a task handler gets: its input, a private work folder, and ways to report and store. */
export interface TaskContext<T extends TaskType = TaskType> {
  taskId: string;
  attempt: number;
  /** Parsed with the task type's contract (common/src/tasks/<type>.ts) before the handler runs. */
  payload: TaskLeasePayload<T>;
  workDir: string;
  signal: AbortSignal;
  log: Logger;
  config: AgentConfig;
  host: HostCapabilities;
  /** Speed figures only the task can measure (the agent's /metrics). */
  metrics: Pick<AgentMetrics, 'renderEncoded'>;
  /** fraction 0..1 of the whole task; stage names a step the coordinator maps to user-facing progress. */
  progress(fraction: number, stage?: TaskStage<T>, message?: string): void;
  /** Tells the coordinator something it may act on before the task ends; resolves once it answered
   *  (if it refused the task, `signal` is aborted by then). */
  facts(facts: TaskFacts<T>): Promise<void>;
  /** Stored objects this host read or wrote lately (a job's source): fetch one through it
   *  (StoredObjectCache in ./object-cache.ts). */
  objects: StoredObjects;
  /** Uploads a local file as one output of this task; returns the object key to put in the result. */
  upload(localPath: string, name: string, contentType: string): Promise<{ objectKey: string; sizeBytes: number }>;
}

/** Stored objects kept on this host for the next task that reads them. */
export interface StoredObjects {
  /** The object at `dest`: from this host's copy when it still matches the store, else downloaded (and kept). */
  fetch(objectKey: string, url: string, dest: string, signal: AbortSignal): Promise<{ bytes: number; cached: boolean }>;
  /** This host's copy of the object at `dest` when it still matches the store; false (nothing
   *  fetched) when there is none: the caller fetches what it needs of it itself. */
  reuse(objectKey: string, url: string, dest: string, signal: AbortSignal): Promise<boolean>;
  /** Keeps a local file that is (or has just been stored as) the object. A `shortLived` one (a
   *  render's chunk, read once by its join) is the first to go when room is needed. */
  keep(objectKey: string, file: string, opts?: { shortLived?: boolean }): Promise<void>;
  /** Drops this host's copy of an object no task will read again. */
  forget(objectKey: string): Promise<void>;
}

/** A failure the user should see as is; `retryable` false means another agent would fail too. */
export class TaskError extends Error {
  constructor(
    message: string,
    readonly code: TaskFailureCode = 'TASK_FAILED',
    readonly retryable = false,
  ) {
    super(message);
  }
}

export interface TaskHandler<T extends TaskType> {
  run(ctx: TaskContext<T>): Promise<TaskResult<T>>;
}
