// Original file: protos/shorts/v1/agent.proto


export interface CompleteTaskRequest {
  'task_id'?: (string);
  'lease_token'?: (string);
  'result_json'?: (string);
}

export interface CompleteTaskRequest__Output {
  'task_id': (string);
  'lease_token': (string);
  'result_json': (string);
}
