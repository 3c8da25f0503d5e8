import type { TaskState, TaskType } from '@shorts/common/tasks';

export interface TaskRow {
  id: string;
  type: TaskType;
  organizationId: string | null;
  subjectId: string | null;
  payload: Record<string, unknown>;
  state: TaskState;
  attempts: number;
  maxAttempts: number;
  leaseToken: string | null;
  leasedBy: string | null;
  leaseExpiresAt: Date | null;
  progress: number;
  stage: string | null;
  result: unknown;
  lastError: string | null;
  cancelRequested: boolean;
  queuedAt: Date;
  startedAt: Date | null;
  requires: string[];
  prefers: string[];
  waitingReason: string | null;
  /** Set on a child task (fan-out): the task it is part of. */
  parentId: string | null;
  childIndex: number | null;
  /** On a waiting parent: children not yet completed. */
  childrenPending: number;
  /** The X-Request-Id of the API request that queued it (or its parent), when one did. */
  requestId: string | null;
}

export const TASK_COLUMNS = `id, type, organization_id AS "organizationId", subject_id AS "subjectId", payload, state, attempts,
  max_attempts AS "maxAttempts", lease_token AS "leaseToken", leased_by AS "leasedBy", lease_expires_at AS "leaseExpiresAt",
  progress, stage, result, last_error AS "lastError", cancel_requested AS "cancelRequested", queued_at AS "queuedAt",
  started_at AS "startedAt", requires, prefers, waiting_reason AS "waitingReason",
  parent_id AS "parentId", child_index AS "childIndex", children_pending AS "childrenPending", request_id AS "requestId"`;
