import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { AgentServiceClient as _shorts_v1_AgentServiceClient, AgentServiceDefinition as _shorts_v1_AgentServiceDefinition } from './shorts/v1/AgentService.js';
import type { Capabilities as _shorts_v1_Capabilities, Capabilities__Output as _shorts_v1_Capabilities__Output } from './shorts/v1/Capabilities.js';
import type { CompleteTaskRequest as _shorts_v1_CompleteTaskRequest, CompleteTaskRequest__Output as _shorts_v1_CompleteTaskRequest__Output } from './shorts/v1/CompleteTaskRequest.js';
import type { CompleteTaskResponse as _shorts_v1_CompleteTaskResponse, CompleteTaskResponse__Output as _shorts_v1_CompleteTaskResponse__Output } from './shorts/v1/CompleteTaskResponse.js';
import type { CreateUploadUrlRequest as _shorts_v1_CreateUploadUrlRequest, CreateUploadUrlRequest__Output as _shorts_v1_CreateUploadUrlRequest__Output } from './shorts/v1/CreateUploadUrlRequest.js';
import type { CreateUploadUrlResponse as _shorts_v1_CreateUploadUrlResponse, CreateUploadUrlResponse__Output as _shorts_v1_CreateUploadUrlResponse__Output } from './shorts/v1/CreateUploadUrlResponse.js';
import type { FailTaskRequest as _shorts_v1_FailTaskRequest, FailTaskRequest__Output as _shorts_v1_FailTaskRequest__Output } from './shorts/v1/FailTaskRequest.js';
import type { FailTaskResponse as _shorts_v1_FailTaskResponse, FailTaskResponse__Output as _shorts_v1_FailTaskResponse__Output } from './shorts/v1/FailTaskResponse.js';
import type { GpuInfo as _shorts_v1_GpuInfo, GpuInfo__Output as _shorts_v1_GpuInfo__Output } from './shorts/v1/GpuInfo.js';
import type { HeartbeatRequest as _shorts_v1_HeartbeatRequest, HeartbeatRequest__Output as _shorts_v1_HeartbeatRequest__Output } from './shorts/v1/HeartbeatRequest.js';
import type { HeartbeatResponse as _shorts_v1_HeartbeatResponse, HeartbeatResponse__Output as _shorts_v1_HeartbeatResponse__Output } from './shorts/v1/HeartbeatResponse.js';
import type { LeaseTaskRequest as _shorts_v1_LeaseTaskRequest, LeaseTaskRequest__Output as _shorts_v1_LeaseTaskRequest__Output } from './shorts/v1/LeaseTaskRequest.js';
import type { LeaseTaskResponse as _shorts_v1_LeaseTaskResponse, LeaseTaskResponse__Output as _shorts_v1_LeaseTaskResponse__Output } from './shorts/v1/LeaseTaskResponse.js';
import type { RegisterAgentRequest as _shorts_v1_RegisterAgentRequest, RegisterAgentRequest__Output as _shorts_v1_RegisterAgentRequest__Output } from './shorts/v1/RegisterAgentRequest.js';
import type { RegisterAgentResponse as _shorts_v1_RegisterAgentResponse, RegisterAgentResponse__Output as _shorts_v1_RegisterAgentResponse__Output } from './shorts/v1/RegisterAgentResponse.js';
import type { ReleaseTaskRequest as _shorts_v1_ReleaseTaskRequest, ReleaseTaskRequest__Output as _shorts_v1_ReleaseTaskRequest__Output } from './shorts/v1/ReleaseTaskRequest.js';
import type { ReleaseTaskResponse as _shorts_v1_ReleaseTaskResponse, ReleaseTaskResponse__Output as _shorts_v1_ReleaseTaskResponse__Output } from './shorts/v1/ReleaseTaskResponse.js';
import type { ReportProgressRequest as _shorts_v1_ReportProgressRequest, ReportProgressRequest__Output as _shorts_v1_ReportProgressRequest__Output } from './shorts/v1/ReportProgressRequest.js';
import type { ReportProgressResponse as _shorts_v1_ReportProgressResponse, ReportProgressResponse__Output as _shorts_v1_ReportProgressResponse__Output } from './shorts/v1/ReportProgressResponse.js';
import type { Task as _shorts_v1_Task, Task__Output as _shorts_v1_Task__Output } from './shorts/v1/Task.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  shorts: {
    v1: {
      AgentService: SubtypeConstructor<typeof grpc.Client, _shorts_v1_AgentServiceClient> & { service: _shorts_v1_AgentServiceDefinition }
      Capabilities: MessageTypeDefinition<_shorts_v1_Capabilities, _shorts_v1_Capabilities__Output>
      CompleteTaskRequest: MessageTypeDefinition<_shorts_v1_CompleteTaskRequest, _shorts_v1_CompleteTaskRequest__Output>
      CompleteTaskResponse: MessageTypeDefinition<_shorts_v1_CompleteTaskResponse, _shorts_v1_CompleteTaskResponse__Output>
      CreateUploadUrlRequest: MessageTypeDefinition<_shorts_v1_CreateUploadUrlRequest, _shorts_v1_CreateUploadUrlRequest__Output>
      CreateUploadUrlResponse: MessageTypeDefinition<_shorts_v1_CreateUploadUrlResponse, _shorts_v1_CreateUploadUrlResponse__Output>
      ExecutionProvider: EnumTypeDefinition
      FailTaskRequest: MessageTypeDefinition<_shorts_v1_FailTaskRequest, _shorts_v1_FailTaskRequest__Output>
      FailTaskResponse: MessageTypeDefinition<_shorts_v1_FailTaskResponse, _shorts_v1_FailTaskResponse__Output>
      GpuInfo: MessageTypeDefinition<_shorts_v1_GpuInfo, _shorts_v1_GpuInfo__Output>
      HeartbeatRequest: MessageTypeDefinition<_shorts_v1_HeartbeatRequest, _shorts_v1_HeartbeatRequest__Output>
      HeartbeatResponse: MessageTypeDefinition<_shorts_v1_HeartbeatResponse, _shorts_v1_HeartbeatResponse__Output>
      LeaseTaskRequest: MessageTypeDefinition<_shorts_v1_LeaseTaskRequest, _shorts_v1_LeaseTaskRequest__Output>
      LeaseTaskResponse: MessageTypeDefinition<_shorts_v1_LeaseTaskResponse, _shorts_v1_LeaseTaskResponse__Output>
      RegisterAgentRequest: MessageTypeDefinition<_shorts_v1_RegisterAgentRequest, _shorts_v1_RegisterAgentRequest__Output>
      RegisterAgentResponse: MessageTypeDefinition<_shorts_v1_RegisterAgentResponse, _shorts_v1_RegisterAgentResponse__Output>
      ReleaseTaskRequest: MessageTypeDefinition<_shorts_v1_ReleaseTaskRequest, _shorts_v1_ReleaseTaskRequest__Output>
      ReleaseTaskResponse: MessageTypeDefinition<_shorts_v1_ReleaseTaskResponse, _shorts_v1_ReleaseTaskResponse__Output>
      ReportProgressRequest: MessageTypeDefinition<_shorts_v1_ReportProgressRequest, _shorts_v1_ReportProgressRequest__Output>
      ReportProgressResponse: MessageTypeDefinition<_shorts_v1_ReportProgressResponse, _shorts_v1_ReportProgressResponse__Output>
      Task: MessageTypeDefinition<_shorts_v1_Task, _shorts_v1_Task__Output>
    }
  }
}

