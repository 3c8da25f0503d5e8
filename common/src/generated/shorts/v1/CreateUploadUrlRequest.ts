// Original file: protos/shorts/v1/agent.proto


export interface CreateUploadUrlRequest {
  'task_id'?: (string);
  'lease_token'?: (string);
  /**
   * File name within the task's output folder, for example "short-0.mp4".
   */
  'name'?: (string);
  'content_type'?: (string);
}

export interface CreateUploadUrlRequest__Output {
  'task_id': (string);
  'lease_token': (string);
  /**
   * File name within the task's output folder, for example "short-0.mp4".
   */
  'name': (string);
  'content_type': (string);
}
