// Original file: protos/shorts/v1/agent.proto

import type { Task as _shorts_v1_Task, Task__Output as _shorts_v1_Task__Output } from '../../shorts/v1/Task.js';

export interface LeaseTaskResponse {
  /**
   * Unset when no task arrived within wait_ms.
   */
  'task'?: (_shorts_v1_Task | null);
  /**
   * The operator drained this agent: finish running tasks, lease nothing new.
   */
  'draining'?: (boolean);
}

export interface LeaseTaskResponse__Output {
  /**
   * Unset when no task arrived within wait_ms.
   */
  'task': (_shorts_v1_Task__Output | null);
  /**
   * The operator drained this agent: finish running tasks, lease nothing new.
   */
  'draining': (boolean);
}
