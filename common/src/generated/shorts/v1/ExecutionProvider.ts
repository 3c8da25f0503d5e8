// Original file: protos/shorts/v1/agent.proto

export const ExecutionProvider = {
  EXECUTION_PROVIDER_UNSPECIFIED: 'EXECUTION_PROVIDER_UNSPECIFIED',
  EXECUTION_PROVIDER_CPU: 'EXECUTION_PROVIDER_CPU',
  EXECUTION_PROVIDER_CUDA: 'EXECUTION_PROVIDER_CUDA',
} as const;

export type ExecutionProvider =
  | 'EXECUTION_PROVIDER_UNSPECIFIED'
  | 0
  | 'EXECUTION_PROVIDER_CPU'
  | 1
  | 'EXECUTION_PROVIDER_CUDA'
  | 2

export type ExecutionProvider__Output = typeof ExecutionProvider[keyof typeof ExecutionProvider]
