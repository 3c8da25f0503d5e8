import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import { loadAgentProto, type AgentRpc, type AgentRpcRequest, type AgentRpcResponse } from '@shorts/common/proto';
import type { AgentServiceClient } from '@shorts/common/generated/shorts/v1/AgentService';
import { retry } from '@shorts/common/retry';

/** Lease lost: the coordinator gave the task to someone else; stop working on it. */
export class LeaseLostError extends Error {}

/** What a call needs of an RPC's definition, typed per RPC so a generic call keeps its types. */
type Method<K extends AgentRpc> = Pick<
  grpc.MethodDefinition<AgentRpcRequest<K>, AgentRpcResponse<K>>,
  'path' | 'requestSerialize' | 'responseDeserialize'
>;

const RETRYABLE = new Set([grpc.status.UNAVAILABLE]);
/** Waits between tries of a call: 0.2 s doubling to 5 s, each ±25 % so agents that lost their
 *  coordinator together do not all come back at once. */
const CALL_BACKOFF = { first: 200, max: 5_000, jitter: 0.25 } as const;

/** Promise wrapper over shorts.v1.AgentService. Only UNAVAILABLE is retried, with capped backoff. */
export class CoordinatorClient {
  private readonly client: AgentServiceClient;
  private readonly methods: { [K in AgentRpc]: Method<K> };
  private readonly metadata = new grpc.Metadata();

  constructor(address: string, token: string, tlsCaPath?: string) {
    const { AgentService } = loadAgentProto();
    const creds = tlsCaPath ? grpc.credentials.createSsl(readFileSync(tlsCaPath)) : grpc.credentials.createInsecure();
    this.client = new AgentService(address, creds, { 'grpc.keepalive_time_ms': 30_000 });
    this.methods = AgentService.service;
    this.metadata.set('authorization', `Bearer ${token}`);
  }

  call<K extends AgentRpc>(
    rpc: K,
    req: AgentRpcRequest<K>,
    opts: { deadlineMs?: number; retryForMs?: number } = {},
  ): Promise<AgentRpcResponse<K>> {
    type Res = AgentRpcResponse<K>;
    const method = this.methods[rpc];
    const once = (): Promise<Res> =>
      new Promise<Res>((resolve, reject) => {
        const deadline = new Date(Date.now() + (opts.deadlineMs ?? 30_000));
        this.client.makeUnaryRequest(
          method.path,
          method.requestSerialize,
          method.responseDeserialize,
          req,
          this.metadata,
          { deadline },
          (err, res) => (err || res === undefined ? reject(err ?? new Error(`${rpc}: empty response`)) : resolve(res)),
        );
      });
    return retry(once, {
      ...CALL_BACKOFF,
      deadline: Date.now() + (opts.retryForMs ?? 60_000),
      retryable: (err) => RETRYABLE.has((err as grpc.ServiceError).code),
    }).catch((err: grpc.ServiceError) => {
      if (err.code === grpc.status.FAILED_PRECONDITION) throw new LeaseLostError(err.details || err.message);
      throw err;
    });
  }

  close(): void {
    this.client.close();
  }
}
