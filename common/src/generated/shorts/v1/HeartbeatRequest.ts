// Original file: protos/shorts/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

export interface HeartbeatRequest {
  'agent_id'?: (string);
  'running_tasks'?: (number);
  'free_disk_bytes'?: (number | string | Long);
}

export interface HeartbeatRequest__Output {
  'agent_id': (string);
  'running_tasks': (number);
  'free_disk_bytes': (number);
}
