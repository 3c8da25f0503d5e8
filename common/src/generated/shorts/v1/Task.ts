// Original file: protos/shorts/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

export interface Task {
  'task_id'?: (string);
  'type'?: (string);
  'lease_token'?: (string);
  'attempt'?: (number);
  'lease_expires_at_ms'?: (number | string | Long);
  /**
   * Type-specific input, JSON; its shape is owned by the task type on both sides.
   */
  'payload_json'?: (string);
  /**
   * The X-Request-Id of the API request that queued the task; empty when none did. The agent puts
   * it on its log lines for the task.
   */
  'request_id'?: (string);
}

export interface Task__Output {
  'task_id': (string);
  'type': (string);
  'lease_token': (string);
  'attempt': (number);
  'lease_expires_at_ms': (number);
  /**
   * Type-specific input, JSON; its shape is owned by the task type on both sides.
   */
  'payload_json': (string);
  /**
   * The X-Request-Id of the API request that queued the task; empty when none did. The agent puts
   * it on its log lines for the task.
   */
  'request_id': (string);
}
