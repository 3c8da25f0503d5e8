import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import { timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/db.js';
import { AppError } from '../../../common/src/errors.js';
import { newId } from '../../../common/src/ids.js';
import type { Logger } from '../../../common/src/logger.js';
import { loadAgentProto } from '../../../common/src/proto.js';
import { TASK_TYPES } from '../../../common/src/tasks.js';
import type { Metrics } from '../metrics/metrics.js';
import { LEASE_LOST, taskObjectKey, type TaskQueue } from '../tasks/task-queue.js';
import type { ObjectUrls } from '../storage/urls.js';

export interface AgentServiceDeps {
  db: Db;
  queue: TaskQueue;
  log: Logger;
  metrics: Metrics;
  urls: ObjectUrls;
  clusterToken: string;
  leaseTtlMs: number;
  leaseWaitMs: number;
}

interface AgentSession {
  id: string;
  name: string;
  taskTypes: string[];
  lastSeen: number;
}

/** The coordinator's side of shorts.v1.AgentService: thin handlers over the task queue. */
export class AgentRegistry {
  readonly sessions = new Map<string, AgentSession>();
  constructor(private readonly heartbeatMs: number) {}

  touch(id: string): AgentSession | undefined {
    const s = this.sessions.get(id);
    if (s) s.lastSeen = Date.now();
    return s;
  }

  /** Agents heard from within three heartbeats. */
  connectedCount(): number {
    const cutoff = Date.now() - this.heartbeatMs * 3;
    let n = 0;
    for (const s of this.sessions.values()) if (s.lastSeen >= cutoff) n++;
    return n;
  }
}

function toGrpcError(err: unknown): grpc.ServiceError {
  const e = new Error(err instanceof Error ? err.message : String(err)) as grpc.ServiceError;
  if (err instanceof AppError) {
    e.code = err.error === LEASE_LOST ? grpc.status.FAILED_PRECONDITION
      : err.status === 401 ? grpc.status.UNAUTHENTICATED
      : err.status === 404 ? grpc.status.NOT_FOUND
      : err.status < 500 ? grpc.status.INVALID_ARGUMENT : grpc.status.INTERNAL;
  } else {
    e.code = grpc.status.INTERNAL;
    e.message = 'internal error';
  }
  return e;
}

function tokenMatches(expected: string, metadata: grpc.Metadata): boolean {
  const header = String(metadata.get('authorization')[0] ?? '');
  const given = Buffer.from(header.replace(/^Bearer\s+/i, ''));
  const want = Buffer.from(expected);
  return given.length === want.length && timingSafeEqual(given, want);
}

export function createAgentServiceHandlers(deps: AgentServiceDeps, registry: AgentRegistry): grpc.UntypedServiceImplementation {
  const { queue, log, db } = deps;

  // Every RPC: authenticate, run, map errors to gRPC statuses in one place.
  const unary = <Req, Res>(name: string, fn: (req: Req, call: grpc.ServerUnaryCall<Req, Res>) => Promise<Res>) =>
    (call: grpc.ServerUnaryCall<Req, Res>, callback: grpc.sendUnaryData<Res>) => {
      if (!tokenMatches(deps.clusterToken, call.metadata)) {
        callback({ code: grpc.status.UNAUTHENTICATED, message: 'invalid cluster token' } as grpc.ServiceError);
        return;
      }
      fn(call.request, call).then(
        (res) => callback(null, res),
        (err) => {
          if (!(err instanceof AppError)) log.error('agent rpc failed', { rpc: name, err });
          callback(toGrpcError(err));
        },
      );
    };

  // Another coordinator behind the same load balancer may have registered the agent: Postgres knows.
  const sessionOf = async (agentId: string) => {
    const known = registry.touch(agentId);
    if (known) return known;
    const row = await db.one<{ name: string; capabilities: { task_types?: string[] } }>('SELECT name, capabilities FROM agents WHERE id = $1', [agentId]);
    if (!row) throw new AppError(404, 'unknown_agent', `agent ${agentId} is not registered`);
    const session = { id: agentId, name: row.name, taskTypes: row.capabilities.task_types ?? [], lastSeen: Date.now() };
    registry.sessions.set(agentId, session);
    return session;
  };

  return {
    RegisterAgent: unary<any, any>('RegisterAgent', async (req) => {
      const caps = req.capabilities ?? {};
      const taskTypes = (caps.task_types as string[]).filter((t) => (TASK_TYPES as readonly string[]).includes(t));
      const id = newId();
      await db.query('INSERT INTO agents (id, name, capabilities) VALUES ($1, $2, $3)', [id, req.name || 'agent', { ...caps, task_types: taskTypes }]);
      registry.sessions.set(id, { id, name: req.name, taskTypes, lastSeen: Date.now() });
      log.info('agent registered', { agentId: id, name: req.name, taskTypes, nvenc: caps.nvenc_available, cores: caps.cpu_cores });
      return { agent_id: id, lease_ttl_ms: deps.leaseTtlMs, heartbeat_interval_ms: Math.floor(deps.leaseTtlMs / 3) };
    }),

    LeaseTask: unary<any, any>('LeaseTask', async (req, call) => {
      const session = await sessionOf(req.agent_id);
      const types = (req.task_types as string[]).length ? (req.task_types as string[]).filter((t) => session.taskTypes.includes(t)) : session.taskTypes;
      const abort = new AbortController();
      call.on('cancelled', () => abort.abort());
      const waitMs = Math.min(req.wait_ms || deps.leaseWaitMs, deps.leaseWaitMs);
      const task = await queue.lease(session.id, types, waitMs, abort.signal);
      registry.touch(session.id);
      if (!task) return {};
      return {
        task: {
          task_id: task.id,
          type: task.type,
          lease_token: task.leaseToken,
          attempt: task.attempts,
          lease_expires_at_ms: task.leaseExpiresAt ? new Date(task.leaseExpiresAt).getTime() : 0,
          payload_json: JSON.stringify(await queue.leasePayload(task)),
        },
      };
    }),

    ReportProgress: unary<any, any>('ReportProgress', async (req) => {
      let facts: Record<string, unknown> | undefined;
      if (req.facts_json) {
        try {
          facts = JSON.parse(req.facts_json);
        } catch {
          throw new AppError(400, 'bad_facts', 'facts_json is not valid JSON');
        }
      }
      const res = await queue.progress(req.task_id, req.lease_token, req.progress, req.stage || null, req.message, facts);
      return { cancel_requested: res.cancelRequested };
    }),

    CompleteTask: unary<any, any>('CompleteTask', async (req) => {
      let result: Record<string, unknown>;
      try {
        result = req.result_json ? JSON.parse(req.result_json) : {};
      } catch {
        throw new AppError(400, 'bad_result', 'result_json is not valid JSON');
      }
      await queue.complete(req.task_id, req.lease_token, result);
      return {};
    }),

    FailTask: unary<any, any>('FailTask', async (req) => {
      const res = await queue.fail(req.task_id, req.lease_token, req.message || 'task failed', req.retryable, req.code || 'TASK_FAILED');
      return { will_retry: res.willRetry };
    }),

    ReleaseTask: unary<any, any>('ReleaseTask', async (req) => {
      await queue.release(req.task_id, req.lease_token, req.reason || 'released by agent');
      return {};
    }),

    CreateUploadUrl: unary<any, any>('CreateUploadUrl', async (req) => {
      const task = await queue.get(req.task_id);
      if (!task || task.state !== 'leased' || task.leaseToken !== req.lease_token) {
        throw new AppError(409, LEASE_LOST, `Task ${req.task_id} is no longer leased with this token`);
      }
      if (!/^[A-Za-z0-9._-]{1,100}$/.test(req.name)) throw new AppError(400, 'bad_name', 'upload name must be a plain file name');
      const key = taskObjectKey(task, req.name);
      const { url, expiresAt } = await deps.urls.sign(key, 'PUT');
      return { url, object_key: key, expires_at_ms: expiresAt.getTime() };
    }),

    Heartbeat: unary<any, any>('Heartbeat', async (req) => {
      const s = await sessionOf(req.agent_id).catch(() => undefined);
      if (!s) return { reregister: true };
      await db.query('UPDATE agents SET last_seen_at = now() WHERE id = $1', [req.agent_id]);
      return { reregister: false };
    }),
  };
}

export async function startGrpcServer(
  deps: AgentServiceDeps,
  registry: AgentRegistry,
  bind: { host: string; port: number; tlsCertPath?: string; tlsKeyPath?: string },
): Promise<{ server: grpc.Server; port: number }> {
  const { AgentService } = loadAgentProto();
  const server = new grpc.Server({ 'grpc.keepalive_permit_without_calls': 1 });
  server.addService(AgentService.service, createAgentServiceHandlers(deps, registry));
  const credentials = bind.tlsCertPath && bind.tlsKeyPath
    ? grpc.ServerCredentials.createSsl(null, [{ cert_chain: readFileSync(bind.tlsCertPath), private_key: readFileSync(bind.tlsKeyPath) }], false)
    : grpc.ServerCredentials.createInsecure();
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${bind.host}:${bind.port}`, credentials, (err, p) => (err ? reject(err) : resolve(p))),
  );
  return { server, port };
}
