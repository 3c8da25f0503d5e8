// Original file: protos/shorts/v1/agent.proto


export interface LeaseTaskRequest {
  'agent_id'?: (string);
  /**
   * Types this slot can run now; empty means all the agent registered.
   */
  'task_types'?: (string)[];
  'wait_ms'?: (number);
}

export interface LeaseTaskRequest__Output {
  'agent_id': (string);
  /**
   * Types this slot can run now; empty means all the agent registered.
   */
  'task_types': (string)[];
  'wait_ms': (number);
}
