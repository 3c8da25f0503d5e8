// Original file: protos/shorts/v1/agent.proto


export interface ReportProgressResponse {
  'cancel_requested'?: (boolean);
}

export interface ReportProgressResponse__Output {
  'cancel_requested': (boolean);
}
