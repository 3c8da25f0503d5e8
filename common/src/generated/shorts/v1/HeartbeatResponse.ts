// Original file: protos/shorts/v1/agent.proto


export interface HeartbeatResponse {
  /**
   * Set when the coordinator no longer knows this agent (restarted): register again.
   */
  'reregister'?: (boolean);
  /**
   * The operator drained this agent: finish running tasks, lease nothing new.
   */
  'draining'?: (boolean);
}

export interface HeartbeatResponse__Output {
  /**
   * Set when the coordinator no longer knows this agent (restarted): register again.
   */
  'reregister': (boolean);
  /**
   * The operator drained this agent: finish running tasks, lease nothing new.
   */
  'draining': (boolean);
}
