import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import { timingSafeEqual } from 'node:crypto';
import { loadAgentProto } from '@shorts/common/proto';
import type { AgentServiceHandlers } from '@shorts/common/generated/shorts/v1/AgentService';
import type { AgentRegistry } from './agent-registry.js';
import { agentRpcContext, type AgentServiceDeps } from './agent-rpc.js';
import { heartbeatRpc, registerAgentRpc } from './agent-rpc-membership.js';
import { leaseTaskRpc } from './agent-rpc-lease.js';
import { reportRpcs } from './agent-rpc-report.js';
import { createUploadUrlRpc } from './agent-rpc-upload.js';

export { AgentRegistry } from './agent-registry.js';
export type { AgentServiceDeps } from './agent-rpc.js';

function tokenMatches(expected: string, metadata: grpc.Metadata): boolean {
  const header = String(metadata.get('authorization')[0] ?? '');
  const given = Buffer.from(header.replace(/^Bearer\s+/i, ''));
  const want = Buffer.from(expected);
  return given.length === want.length && timingSafeEqual(given, want);
}

/**
 * Refuses a call whose headers lack the cluster token before its message is read. A handler runs
 * only once the whole message has arrived and been decoded, up to the 64 MiB that analysis results
 * need; this answers UNAUTHENTICATED from the headers alone, so a stranger's call costs at most
 * what HTTP/2 flow control lets through unread (one window, 64 KiB), never a 64 MiB decode.
 */
export function clusterTokenInterceptor(clusterToken: string): grpc.ServerInterceptor {
  return (_method, call) =>
    new grpc.ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, pass) => {
            if (tokenMatches(clusterToken, metadata)) pass(metadata);
            else call.sendStatus({ code: grpc.status.UNAUTHENTICATED, details: 'invalid cluster token' });
          },
        }),
    });
}

/** The coordinator's side of shorts.v1.AgentService: thin handlers over the task queue, one file per RPC or group. */
export function createAgentServiceHandlers(deps: AgentServiceDeps, registry: AgentRegistry): AgentServiceHandlers {
  const rpc = agentRpcContext(deps, registry);
  // In the order of protos/shorts/v1/agent.proto.
  return {
    RegisterAgent: registerAgentRpc(rpc),
    LeaseTask: leaseTaskRpc(rpc),
    ...reportRpcs(rpc),
    CreateUploadUrl: createUploadUrlRpc(rpc),
    Heartbeat: heartbeatRpc(rpc),
  };
}

export async function startGrpcServer(
  deps: AgentServiceDeps,
  registry: AgentRegistry,
  bind: { host: string; port: number; tlsCertPath?: string; tlsKeyPath?: string },
): Promise<{ server: grpc.Server; port: number }> {
  const { AgentService } = loadAgentProto();
  // An analysis result carries each short's face tracks (for renders that re-plan the camera path):
  // a crowded 90 s short can pass gRPC's 4 MB default on its own.
  const server = new grpc.Server({
    'grpc.keepalive_permit_without_calls': 1,
    'grpc.max_receive_message_length': 64 * 1024 * 1024,
    interceptors: [clusterTokenInterceptor(deps.clusterToken)],
  });
  server.addService(AgentService.service, createAgentServiceHandlers(deps, registry));
  const credentials =
    bind.tlsCertPath && bind.tlsKeyPath
      ? grpc.ServerCredentials.createSsl(
          null,
          [{ cert_chain: readFileSync(bind.tlsCertPath), private_key: readFileSync(bind.tlsKeyPath) }],
          false,
        )
      : grpc.ServerCredentials.createInsecure();
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${bind.host}:${bind.port}`, credentials, (err, p) => (err ? reject(err) : resolve(p))),
  );
  return { server, port };
}
