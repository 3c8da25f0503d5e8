import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import { loadAgentProto } from '../../common/src/proto.js';

/** Lease lost: the coordinator gave the task to someone else; stop working on it. */
export class LeaseLostError extends Error {}

const RETRYABLE = new Set([grpc.status.UNAVAILABLE]);

/** Promise wrapper over shorts.v1.AgentService. Only UNAVAILABLE is retried, with capped backoff. */
export class CoordinatorClient {
  private readonly client: grpc.Client & Record<string, any>;
  private readonly metadata = new grpc.Metadata();

  constructor(address: string, token: string, tlsCaPath?: string) {
    const { AgentService } = loadAgentProto();
    const creds = tlsCaPath ? grpc.credentials.createSsl(readFileSync(tlsCaPath)) : grpc.credentials.createInsecure();
    this.client = new AgentService(address, creds, { 'grpc.keepalive_time_ms': 30_000 }) as any;
    this.metadata.set('authorization', `Bearer ${token}`);
  }

  call<Res = any>(rpc: string, req: object, opts: { deadlineMs?: number; retryForMs?: number } = {}): Promise<Res> {
    const retryUntil = Date.now() + (opts.retryForMs ?? 60_000);
    let delay = 200;
    const attempt = (): Promise<Res> =>
      new Promise<Res>((resolve, reject) => {
        const deadline = new Date(Date.now() + (opts.deadlineMs ?? 30_000));
        this.client[rpc](req, this.metadata, { deadline }, (err: grpc.ServiceError | null, res: Res) => (err ? reject(err) : resolve(res)));
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
