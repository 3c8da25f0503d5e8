// Kinds of work an agent can lease. The coordinator and the agent each keep a registry keyed by these.
export const TASK_TYPES = ['probe-media', 'analyze-video', 'analyze-range', 'reframe-short', 'render-short', 'render-chunk'] as const;
export type TaskType = (typeof TASK_TYPES)[number];

export const isTaskType = (v: string): v is TaskType => (TASK_TYPES as readonly string[]).includes(v);

export const TASK_STATES = {
  queued: 'queued',
  leased: 'leased',
  /** Its own part done, it waits for its child tasks (fan-out); no agent holds it. */
  waiting: 'waiting',
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
} as const;
export type TaskState = (typeof TASK_STATES)[keyof typeof TASK_STATES];
