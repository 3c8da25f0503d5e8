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

/** shorts.v1.AgentService as generated: a grpc client class whose `service` is the definition. */
type AgentServiceConstructor = ProtoGrpcType['shorts']['v1']['AgentService'];

/** Every RPC of shorts.v1.AgentService, checked against the generated definition both ways. */
const AGENT_RPCS = {
  RegisterAgent: true,
  LeaseTask: true,
  ReportProgress: true,
  CompleteTask: true,
  FailTask: true,
  ReleaseTask: true,
  CreateUploadUrl: true,
  Heartbeat: true,
} as const satisfies Record<AgentRpc, true>;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/**
 * Whether a loaded service is the one generated: a grpc client class (what makeClientConstructor
 * builds) whose definition holds every RPC of AgentService as a unary method at its own path, with
 * the client method to call it.
 */
export function isAgentServiceConstructor(v: unknown): v is AgentServiceConstructor {
  if (typeof v !== 'function' || !(v.prototype instanceof grpc.Client) || !('service' in v)) return false;
  const service = v.service;
  if (!isRecord(service)) return false;
  return Object.keys(AGENT_RPCS).every((name) => {
    const method = service[name];
    return (
      isRecord(method) &&
      method.path === `/shorts.v1.AgentService/${name}` &&
      method.requestStream === false &&
      method.responseStream === false &&
      typeof method.requestSerialize === 'function' &&
      typeof method.responseDeserialize === 'function' &&
      typeof v.prototype[name] === 'function'
    );
  });
}

/** A namespace of the loaded package (`shorts`, `shorts.v1`): neither a service nor a message type. */
const namespaceOf = (v: grpc.GrpcObject[string] | undefined): grpc.GrpcObject | undefined =>
  typeof v === 'object' && !('fileDescriptorProtos' in v) ? v : undefined;

export function loadAgentProto(): Pick<ProtoGrpcType['shorts']['v1'], 'AgentService'> {
  const def = protoLoader.loadSync(path.join(repoRoot(), 'protos', AGENT_PROTO_FILE), PROTO_LOAD_OPTIONS);
  // The one place where the loaded package meets its generated type: checked, not assumed.
  const AgentService = namespaceOf(namespaceOf(grpc.loadPackageDefinition(def).shorts)?.v1)?.AgentService;
  if (!isAgentServiceConstructor(AgentService)) {
    throw new Error(`${AGENT_PROTO_FILE} does not define shorts.v1.AgentService as generated; run \`npm run protos\``);
  }
  return { AgentService };
}

/** The RPC names of shorts.v1.AgentService (the definition's own keys, without its index signature). */
export type AgentRpc = keyof { [K in keyof AgentServiceDefinition as string extends K ? never : K]: true } & string;

/** What a caller sends and what it gets back for one RPC. */
export type AgentRpcRequest<K extends AgentRpc> =
  AgentServiceDefinition[K] extends protoLoader.MethodDefinition<infer Req, infer _Res, infer _ReqOut, infer _ResOut> ? Req : never;
export type AgentRpcResponse<K extends AgentRpc> =
  AgentServiceDefinition[K] extends protoLoader.MethodDefinition<infer _Req, infer _Res, infer _ReqOut, infer ResOut> ? ResOut : never;
