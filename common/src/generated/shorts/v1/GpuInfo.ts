// Original file: protos/shorts/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

export interface GpuInfo {
  'name'?: (string);
  'memory_bytes'?: (number | string | Long);
}

export interface GpuInfo__Output {
  'name': (string);
  'memory_bytes': (number);
}
