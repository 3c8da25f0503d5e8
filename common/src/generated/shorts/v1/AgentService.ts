// Original file: protos/shorts/v1/agent.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { CompleteTaskRequest as _shorts_v1_CompleteTaskRequest, CompleteTaskRequest__Output as _shorts_v1_CompleteTaskRequest__Output } from '../../shorts/v1/CompleteTaskRequest.js';
import type { CompleteTaskResponse as _shorts_v1_CompleteTaskResponse, CompleteTaskResponse__Output as _shorts_v1_CompleteTaskResponse__Output } from '../../shorts/v1/CompleteTaskResponse.js';
import type { CreateUploadUrlRequest as _shorts_v1_CreateUploadUrlRequest, CreateUploadUrlRequest__Output as _shorts_v1_CreateUploadUrlRequest__Output } from '../../shorts/v1/CreateUploadUrlRequest.js';
import type { CreateUploadUrlResponse as _shorts_v1_CreateUploadUrlResponse, CreateUploadUrlResponse__Output as _shorts_v1_CreateUploadUrlResponse__Output } from '../../shorts/v1/CreateUploadUrlResponse.js';
import type { FailTaskRequest as _shorts_v1_FailTaskRequest, FailTaskRequest__Output as _shorts_v1_FailTaskRequest__Output } from '../../shorts/v1/FailTaskRequest.js';
import type { FailTaskResponse as _shorts_v1_FailTaskResponse, FailTaskResponse__Output as _shorts_v1_FailTaskResponse__Output } from '../../shorts/v1/FailTaskResponse.js';
import type { HeartbeatRequest as _shorts_v1_HeartbeatRequest, HeartbeatRequest__Output as _shorts_v1_HeartbeatRequest__Output } from '../../shorts/v1/HeartbeatRequest.js';
import type { HeartbeatResponse as _shorts_v1_HeartbeatResponse, HeartbeatResponse__Output as _shorts_v1_HeartbeatResponse__Output } from '../../shorts/v1/HeartbeatResponse.js';
import type { LeaseTaskRequest as _shorts_v1_LeaseTaskRequest, LeaseTaskRequest__Output as _shorts_v1_LeaseTaskRequest__Output } from '../../shorts/v1/LeaseTaskRequest.js';
import type { LeaseTaskResponse as _shorts_v1_LeaseTaskResponse, LeaseTaskResponse__Output as _shorts_v1_LeaseTaskResponse__Output } from '../../shorts/v1/LeaseTaskResponse.js';
import type { RegisterAgentRequest as _shorts_v1_RegisterAgentRequest, RegisterAgentRequest__Output as _shorts_v1_RegisterAgentRequest__Output } from '../../shorts/v1/RegisterAgentRequest.js';
import type { RegisterAgentResponse as _shorts_v1_RegisterAgentResponse, RegisterAgentResponse__Output as _shorts_v1_RegisterAgentResponse__Output } from '../../shorts/v1/RegisterAgentResponse.js';
import type { ReleaseTaskRequest as _shorts_v1_ReleaseTaskRequest, ReleaseTaskRequest__Output as _shorts_v1_ReleaseTaskRequest__Output } from '../../shorts/v1/ReleaseTaskRequest.js';
import type { ReleaseTaskResponse as _shorts_v1_ReleaseTaskResponse, ReleaseTaskResponse__Output as _shorts_v1_ReleaseTaskResponse__Output } from '../../shorts/v1/ReleaseTaskResponse.js';
import type { ReportProgressRequest as _shorts_v1_ReportProgressRequest, ReportProgressRequest__Output as _shorts_v1_ReportProgressRequest__Output } from '../../shorts/v1/ReportProgressRequest.js';
import type { ReportProgressResponse as _shorts_v1_ReportProgressResponse, ReportProgressResponse__Output as _shorts_v1_ReportProgressResponse__Output } from '../../shorts/v1/ReportProgressResponse.js';

export interface AgentServiceClient extends grpc.Client {
  /**
   * Finishes a task with its result; a stale lease token is refused with FAILED_PRECONDITION.
   */
  CompleteTask(argument: _shorts_v1_CompleteTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_CompleteTaskResponse__Output>): grpc.ClientUnaryCall;
  CompleteTask(argument: _shorts_v1_CompleteTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_shorts_v1_CompleteTaskResponse__Output>): grpc.ClientUnaryCall;
  CompleteTask(argument: _shorts_v1_CompleteTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_CompleteTaskResponse__Output>): grpc.ClientUnaryCall;
  CompleteTask(argument: _shorts_v1_CompleteTaskRequest, callback: grpc.requestCallback<_shorts_v1_CompleteTaskResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Finishes a task with its result; a stale lease token is refused with FAILED_PRECONDITION.
   */
  completeTask(argument: _shorts_v1_CompleteTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_CompleteTaskResponse__Output>): grpc.ClientUnaryCall;
  completeTask(argument: _shorts_v1_CompleteTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_shorts_v1_CompleteTaskResponse__Output>): grpc.ClientUnaryCall;
  completeTask(argument: _shorts_v1_CompleteTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_CompleteTaskResponse__Output>): grpc.ClientUnaryCall;
  completeTask(argument: _shorts_v1_CompleteTaskRequest, callback: grpc.requestCallback<_shorts_v1_CompleteTaskResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * A signed URL where the agent uploads one output file of a leased task.
   */
  CreateUploadUrl(argument: _shorts_v1_CreateUploadUrlRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_CreateUploadUrlResponse__Output>): grpc.ClientUnaryCall;
  CreateUploadUrl(argument: _shorts_v1_CreateUploadUrlRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_shorts_v1_CreateUploadUrlResponse__Output>): grpc.ClientUnaryCall;
  CreateUploadUrl(argument: _shorts_v1_CreateUploadUrlRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_CreateUploadUrlResponse__Output>): grpc.ClientUnaryCall;
  CreateUploadUrl(argument: _shorts_v1_CreateUploadUrlRequest, callback: grpc.requestCallback<_shorts_v1_CreateUploadUrlResponse__Output>): grpc.ClientUnaryCall;
  /**
   * A signed URL where the agent uploads one output file of a leased task.
   */
  createUploadUrl(argument: _shorts_v1_CreateUploadUrlRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_CreateUploadUrlResponse__Output>): grpc.ClientUnaryCall;
  createUploadUrl(argument: _shorts_v1_CreateUploadUrlRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_shorts_v1_CreateUploadUrlResponse__Output>): grpc.ClientUnaryCall;
  createUploadUrl(argument: _shorts_v1_CreateUploadUrlRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_CreateUploadUrlResponse__Output>): grpc.ClientUnaryCall;
  createUploadUrl(argument: _shorts_v1_CreateUploadUrlRequest, callback: grpc.requestCallback<_shorts_v1_CreateUploadUrlResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Reports a failure; retryable failures go back to the queue until attempts run out.
   */
  FailTask(argument: _shorts_v1_FailTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_FailTaskResponse__Output>): grpc.ClientUnaryCall;
  FailTask(argument: _shorts_v1_FailTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_shorts_v1_FailTaskResponse__Output>): grpc.ClientUnaryCall;
  FailTask(argument: _shorts_v1_FailTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_FailTaskResponse__Output>): grpc.ClientUnaryCall;
  FailTask(argument: _shorts_v1_FailTaskRequest, callback: grpc.requestCallback<_shorts_v1_FailTaskResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Reports a failure; retryable failures go back to the queue until attempts run out.
   */
  failTask(argument: _shorts_v1_FailTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_FailTaskResponse__Output>): grpc.ClientUnaryCall;
  failTask(argument: _shorts_v1_FailTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_shorts_v1_FailTaskResponse__Output>): grpc.ClientUnaryCall;
  failTask(argument: _shorts_v1_FailTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_FailTaskResponse__Output>): grpc.ClientUnaryCall;
  failTask(argument: _shorts_v1_FailTaskRequest, callback: grpc.requestCallback<_shorts_v1_FailTaskResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Agent-level heartbeat (running tasks, free disk); keeps the agent online and tells it of a drain.
   */
  Heartbeat(argument: _shorts_v1_HeartbeatRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_HeartbeatResponse__Output>): grpc.ClientUnaryCall;
  Heartbeat(argument: _shorts_v1_HeartbeatRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_shorts_v1_HeartbeatResponse__Output>): grpc.ClientUnaryCall;
  Heartbeat(argument: _shorts_v1_HeartbeatRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_HeartbeatResponse__Output>): grpc.ClientUnaryCall;
  Heartbeat(argument: _shorts_v1_HeartbeatRequest, callback: grpc.requestCallback<_shorts_v1_HeartbeatResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Agent-level heartbeat (running tasks, free disk); keeps the agent online and tells it of a drain.
   */
  heartbeat(argument: _shorts_v1_HeartbeatRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_HeartbeatResponse__Output>): grpc.ClientUnaryCall;
  heartbeat(argument: _shorts_v1_HeartbeatRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_shorts_v1_HeartbeatResponse__Output>): grpc.ClientUnaryCall;
  heartbeat(argument: _shorts_v1_HeartbeatRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_HeartbeatResponse__Output>): grpc.ClientUnaryCall;
  heartbeat(argument: _shorts_v1_HeartbeatRequest, callback: grpc.requestCallback<_shorts_v1_HeartbeatResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Long-poll: answers with a task as soon as one fits, or with none after wait_ms.
   */
  LeaseTask(argument: _shorts_v1_LeaseTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_LeaseTaskResponse__Output>): grpc.ClientUnaryCall;
  LeaseTask(argument: _shorts_v1_LeaseTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_shorts_v1_LeaseTaskResponse__Output>): grpc.ClientUnaryCall;
  LeaseTask(argument: _shorts_v1_LeaseTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_LeaseTaskResponse__Output>): grpc.ClientUnaryCall;
  LeaseTask(argument: _shorts_v1_LeaseTaskRequest, callback: grpc.requestCallback<_shorts_v1_LeaseTaskResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Long-poll: answers with a task as soon as one fits, or with none after wait_ms.
   */
  leaseTask(argument: _shorts_v1_LeaseTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_LeaseTaskResponse__Output>): grpc.ClientUnaryCall;
  leaseTask(argument: _shorts_v1_LeaseTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_shorts_v1_LeaseTaskResponse__Output>): grpc.ClientUnaryCall;
  leaseTask(argument: _shorts_v1_LeaseTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_LeaseTaskResponse__Output>): grpc.ClientUnaryCall;
  leaseTask(argument: _shorts_v1_LeaseTaskRequest, callback: grpc.requestCallback<_shorts_v1_LeaseTaskResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Announces an agent and what its host can do; returns the agent's id and the lease terms.
   */
  RegisterAgent(argument: _shorts_v1_RegisterAgentRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_RegisterAgentResponse__Output>): grpc.ClientUnaryCall;
  RegisterAgent(argument: _shorts_v1_RegisterAgentRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_shorts_v1_RegisterAgentResponse__Output>): grpc.ClientUnaryCall;
  RegisterAgent(argument: _shorts_v1_RegisterAgentRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_RegisterAgentResponse__Output>): grpc.ClientUnaryCall;
  RegisterAgent(argument: _shorts_v1_RegisterAgentRequest, callback: grpc.requestCallback<_shorts_v1_RegisterAgentResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Announces an agent and what its host can do; returns the agent's id and the lease terms.
   */
  registerAgent(argument: _shorts_v1_RegisterAgentRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_RegisterAgentResponse__Output>): grpc.ClientUnaryCall;
  registerAgent(argument: _shorts_v1_RegisterAgentRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_shorts_v1_RegisterAgentResponse__Output>): grpc.ClientUnaryCall;
  registerAgent(argument: _shorts_v1_RegisterAgentRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_RegisterAgentResponse__Output>): grpc.ClientUnaryCall;
  registerAgent(argument: _shorts_v1_RegisterAgentRequest, callback: grpc.requestCallback<_shorts_v1_RegisterAgentResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Hands a lease back without counting an attempt (agent shutting down).
   */
  ReleaseTask(argument: _shorts_v1_ReleaseTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_ReleaseTaskResponse__Output>): grpc.ClientUnaryCall;
  ReleaseTask(argument: _shorts_v1_ReleaseTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_shorts_v1_ReleaseTaskResponse__Output>): grpc.ClientUnaryCall;
  ReleaseTask(argument: _shorts_v1_ReleaseTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_ReleaseTaskResponse__Output>): grpc.ClientUnaryCall;
  ReleaseTask(argument: _shorts_v1_ReleaseTaskRequest, callback: grpc.requestCallback<_shorts_v1_ReleaseTaskResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Hands a lease back without counting an attempt (agent shutting down).
   */
  releaseTask(argument: _shorts_v1_ReleaseTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_ReleaseTaskResponse__Output>): grpc.ClientUnaryCall;
  releaseTask(argument: _shorts_v1_ReleaseTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_shorts_v1_ReleaseTaskResponse__Output>): grpc.ClientUnaryCall;
  releaseTask(argument: _shorts_v1_ReleaseTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_ReleaseTaskResponse__Output>): grpc.ClientUnaryCall;
  releaseTask(argument: _shorts_v1_ReleaseTaskRequest, callback: grpc.requestCallback<_shorts_v1_ReleaseTaskResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Progress of a leased task; doubles as its heartbeat and carries cancel requests back.
   */
  ReportProgress(argument: _shorts_v1_ReportProgressRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_ReportProgressResponse__Output>): grpc.ClientUnaryCall;
  ReportProgress(argument: _shorts_v1_ReportProgressRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_shorts_v1_ReportProgressResponse__Output>): grpc.ClientUnaryCall;
  ReportProgress(argument: _shorts_v1_ReportProgressRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_ReportProgressResponse__Output>): grpc.ClientUnaryCall;
  ReportProgress(argument: _shorts_v1_ReportProgressRequest, callback: grpc.requestCallback<_shorts_v1_ReportProgressResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Progress of a leased task; doubles as its heartbeat and carries cancel requests back.
   */
  reportProgress(argument: _shorts_v1_ReportProgressRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_ReportProgressResponse__Output>): grpc.ClientUnaryCall;
  reportProgress(argument: _shorts_v1_ReportProgressRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_shorts_v1_ReportProgressResponse__Output>): grpc.ClientUnaryCall;
  reportProgress(argument: _shorts_v1_ReportProgressRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_shorts_v1_ReportProgressResponse__Output>): grpc.ClientUnaryCall;
  reportProgress(argument: _shorts_v1_ReportProgressRequest, callback: grpc.requestCallback<_shorts_v1_ReportProgressResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface AgentServiceHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Finishes a task with its result; a stale lease token is refused with FAILED_PRECONDITION.
   */
  CompleteTask: grpc.handleUnaryCall<_shorts_v1_CompleteTaskRequest__Output, _shorts_v1_CompleteTaskResponse>;
  
  /**
   * A signed URL where the agent uploads one output file of a leased task.
   */
  CreateUploadUrl: grpc.handleUnaryCall<_shorts_v1_CreateUploadUrlRequest__Output, _shorts_v1_CreateUploadUrlResponse>;
  
  /**
   * Reports a failure; retryable failures go back to the queue until attempts run out.
   */
  FailTask: grpc.handleUnaryCall<_shorts_v1_FailTaskRequest__Output, _shorts_v1_FailTaskResponse>;
  
  /**
   * Agent-level heartbeat (running tasks, free disk); keeps the agent online and tells it of a drain.
   */
  Heartbeat: grpc.handleUnaryCall<_shorts_v1_HeartbeatRequest__Output, _shorts_v1_HeartbeatResponse>;
  
  /**
   * Long-poll: answers with a task as soon as one fits, or with none after wait_ms.
   */
  LeaseTask: grpc.handleUnaryCall<_shorts_v1_LeaseTaskRequest__Output, _shorts_v1_LeaseTaskResponse>;
  
  /**
   * Announces an agent and what its host can do; returns the agent's id and the lease terms.
   */
  RegisterAgent: grpc.handleUnaryCall<_shorts_v1_RegisterAgentRequest__Output, _shorts_v1_RegisterAgentResponse>;
  
  /**
   * Hands a lease back without counting an attempt (agent shutting down).
   */
  ReleaseTask: grpc.handleUnaryCall<_shorts_v1_ReleaseTaskRequest__Output, _shorts_v1_ReleaseTaskResponse>;
  
  /**
   * Progress of a leased task; doubles as its heartbeat and carries cancel requests back.
   */
  ReportProgress: grpc.handleUnaryCall<_shorts_v1_ReportProgressRequest__Output, _shorts_v1_ReportProgressResponse>;
  
}

export interface AgentServiceDefinition extends grpc.ServiceDefinition {
  CompleteTask: MethodDefinition<_shorts_v1_CompleteTaskRequest, _shorts_v1_CompleteTaskResponse, _shorts_v1_CompleteTaskRequest__Output, _shorts_v1_CompleteTaskResponse__Output>
  CreateUploadUrl: MethodDefinition<_shorts_v1_CreateUploadUrlRequest, _shorts_v1_CreateUploadUrlResponse, _shorts_v1_CreateUploadUrlRequest__Output, _shorts_v1_CreateUploadUrlResponse__Output>
  FailTask: MethodDefinition<_shorts_v1_FailTaskRequest, _shorts_v1_FailTaskResponse, _shorts_v1_FailTaskRequest__Output, _shorts_v1_FailTaskResponse__Output>
  Heartbeat: MethodDefinition<_shorts_v1_HeartbeatRequest, _shorts_v1_HeartbeatResponse, _shorts_v1_HeartbeatRequest__Output, _shorts_v1_HeartbeatResponse__Output>
  LeaseTask: MethodDefinition<_shorts_v1_LeaseTaskRequest, _shorts_v1_LeaseTaskResponse, _shorts_v1_LeaseTaskRequest__Output, _shorts_v1_LeaseTaskResponse__Output>
  RegisterAgent: MethodDefinition<_shorts_v1_RegisterAgentRequest, _shorts_v1_RegisterAgentResponse, _shorts_v1_RegisterAgentRequest__Output, _shorts_v1_RegisterAgentResponse__Output>
  ReleaseTask: MethodDefinition<_shorts_v1_ReleaseTaskRequest, _shorts_v1_ReleaseTaskResponse, _shorts_v1_ReleaseTaskRequest__Output, _shorts_v1_ReleaseTaskResponse__Output>
  ReportProgress: MethodDefinition<_shorts_v1_ReportProgressRequest, _shorts_v1_ReportProgressResponse, _shorts_v1_ReportProgressRequest__Output, _shorts_v1_ReportProgressResponse__Output>
}
