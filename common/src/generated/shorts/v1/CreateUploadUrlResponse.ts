// Original file: protos/shorts/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

export interface CreateUploadUrlResponse {
  'url'?: (string);
  'object_key'?: (string);
  'expires_at_ms'?: (number | string | Long);
}

export interface CreateUploadUrlResponse__Output {
  'url': (string);
  'object_key': (string);
  'expires_at_ms': (number);
}
