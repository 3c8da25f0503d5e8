// Original file: protos/shorts/v1/agent.proto


export interface ReleaseTaskRequest {
  'task_id'?: (string);
  'lease_token'?: (string);
  'reason'?: (string);
}

export interface ReleaseTaskRequest__Output {
  'task_id': (string);
  'lease_token': (string);
  'reason': (string);
}
