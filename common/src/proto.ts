import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

import { repoRoot } from './paths.js';
import type { ProtoGrpcType } from './generated/agent.js';
import type { AgentServiceDefinition } from './generated/shorts/v1/AgentService.js';

/** How both sides load shorts.v1 (field names as on the wire, 64-bit numbers as numbers, enums as
 *  names). `npm run protos` generates the types in ./generated/ with these same options. */
export const PROTO_LOAD_OPTIONS = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
} as const satisfies protoLoader.Options;

export const AGENT_PROTO_FILE = 'shorts/v1/agent.proto';

export function loadAgentProto(): ProtoGrpcType['shorts']['v1'] {
  const def = protoLoader.loadSync(path.join(repoRoot(), 'protos', AGENT_PROTO_FILE), PROTO_LOAD_OPTIONS);
  // The one place where the loaded package meets its generated type.
  return (grpc.loadPackageDefinition(def) as unknown as ProtoGrpcType).shorts.v1;
}

/** The RPC names of shorts.v1.AgentService (the definition's own keys, without its index signature). */
export type AgentRpc = keyof { [K in keyof AgentServiceDefinition as string extends K ? never : K]: true } & string;

/** What a caller sends and what it gets back for one RPC. */
export type AgentRpcRequest<K extends AgentRpc> =
  AgentServiceDefinition[K] extends protoLoader.MethodDefinition<infer Req, infer _Res, infer _ReqOut, infer _ResOut> ? Req : never;
export type AgentRpcResponse<K extends AgentRpc> =
  AgentServiceDefinition[K] extends protoLoader.MethodDefinition<infer _Req, infer _Res, infer _ReqOut, infer ResOut> ? ResOut : never;
