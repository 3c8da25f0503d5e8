// Original file: protos/shorts/v1/agent.proto


export interface FailTaskResponse {
  'will_retry'?: (boolean);
}

export interface FailTaskResponse__Output {
  'will_retry': (boolean);
}
