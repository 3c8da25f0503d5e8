// Original file: protos/shorts/v1/agent.proto


export interface FailTaskRequest {
  'task_id'?: (string);
  'lease_token'?: (string);
  'message'?: (string);
  'retryable'?: (boolean);
  'code'?: (string);
}

export interface FailTaskRequest__Output {
  'task_id': (string);
  'lease_token': (string);
  'message': (string);
  'retryable': (boolean);
  'code': (string);
}
