import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import { loadAgentProto, type AgentRpc, type AgentRpcRequest, type AgentRpcResponse } from '@shorts/common/proto';
import type { AgentServiceClient } from '@shorts/common/generated/shorts/v1/AgentService';

/** Lease lost: the coordinator gave the task to someone else; stop working on it. */
export class LeaseLostError extends Error {}

/** What a call needs of an RPC's definition, typed per RPC so a generic call keeps its types. */
type Method<K extends AgentRpc> = Pick<grpc.MethodDefinition<AgentRpcRequest<K>, AgentRpcResponse<K>>, 'path' | 'requestSerialize' | 'responseDeserialize'>;

const RETRYABLE = new Set([grpc.status.UNAVAILABLE]);

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

  call<K extends AgentRpc>(rpc: K, req: AgentRpcRequest<K>, opts: { deadlineMs?: number; retryForMs?: number } = {}): Promise<AgentRpcResponse<K>> {
    type Res = AgentRpcResponse<K>;
    const method = this.methods[rpc];
    const retryUntil = Date.now() + (opts.retryForMs ?? 60_000);
    let delay = 200;
    const attempt = (): Promise<Res> =>
      new Promise<Res>((resolve, reject) => {
        const deadline = new Date(Date.now() + (opts.deadlineMs ?? 30_000));
        this.client.makeUnaryRequest(method.path, method.requestSerialize, method.responseDeserialize, req, this.metadata, { deadline },
          (err, res) => (err || res === undefined ? reject(err ?? new Error(`${rpc}: empty response`)) : resolve(res)));
      }).catch(async (err: grpc.ServiceError) => {
        if (err.code === grpc.status.FAILED_PRECONDITION) throw new LeaseLostError(err.details || err.message);
        if (!RETRYABLE.has(err.code) || Date.now() + delay > retryUntil) throw err;
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 5_000);
        return attempt();
      });
    return attempt();
  }

  close(): void {
    this.client.close();
  }
}
