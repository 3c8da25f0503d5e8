import * as grpc from '@grpc/grpc-js';
import { isTransientDbError, type Db } from '../db/db.js';
import { AppError, appErrorOf } from '../errors.js';
import type { Logger } from '@shorts/common/logger';
import type { AgentRpc } from '@shorts/common/proto';
import { markAgentSeen } from '../tasks/liveness.js';
import type { Metrics } from '../metrics/metrics.js';
import { LEASE_LOST, type TaskQueue } from '../tasks/task-queue.js';
import type { ObjectUrls } from '../storage/urls.js';
import type { ObjectStore } from '../storage/object-store.js';
import type { AgentRegistry } from './agent-registry.js';

export interface AgentServiceDeps {
  db: Db;
  queue: TaskQueue;
  log: Logger;
  metrics: Metrics;
  urls: ObjectUrls;
  store: Pick<ObjectStore, 'stat'>;
  clusterToken: string;
  leaseTtlMs: number;
  leaseWaitMs: number;
  /** The most bytes one video an agent makes may hold (config AGENT_UPLOAD_MAX_BYTES). */
  agentUploadMaxBytes: number;
}

function toGrpcError(err: unknown): grpc.ServiceError {
  const e = new Error(err instanceof Error ? err.message : String(err)) as grpc.ServiceError;
  const appErr = appErrorOf(err);
  if (appErr) {
    e.code =
      appErr.error === LEASE_LOST
        ? grpc.status.FAILED_PRECONDITION
        : appErr.status === 401
          ? grpc.status.UNAUTHENTICATED
          : appErr.status === 404
            ? grpc.status.NOT_FOUND
            : appErr.status === 503
              ? grpc.status.UNAVAILABLE
              : appErr.status < 500
                ? grpc.status.INVALID_ARGUMENT
                : grpc.status.INTERNAL;
  } else if (isTransientDbError(err)) {
    // The agent retries UNAVAILABLE with backoff: a database hiccup costs it a moment, not its work.
    e.code = grpc.status.UNAVAILABLE;
    e.message = 'coordinator database unavailable; retry';
  } else {
    e.code = grpc.status.INTERNAL;
    e.message = 'internal error';
  }
  return e;
}

/** What each RPC's handler (agent-rpc-*.ts) works with. */
export interface AgentRpcContext {
  deps: AgentServiceDeps;
  registry: AgentRegistry;
  unary<K extends AgentRpc, Req, Res>(
    name: K,
    fn: (req: Req, call: grpc.ServerUnaryCall<Req, Res>) => Promise<Res>,
  ): grpc.handleUnaryCall<Req, Res>;
  markSeen(agentId: string, heartbeat?: { runningTasks: number; freeDiskBytes: number }): ReturnType<typeof markAgentSeen>;
  sessionOf(agentId: string): Promise<{ id: string; name: string; taskTypes: string[] }>;
  reportJson(taskId: string, token: string, field: string, text: string): Promise<unknown>;
}

export function agentRpcContext(deps: AgentServiceDeps, registry: AgentRegistry): AgentRpcContext {
  const { queue, log, db } = deps;
  return {
    deps,
    registry,
    // Every RPC (its caller authenticated by clusterTokenInterceptor): run, map errors to gRPC statuses
    // in one place.
    unary: (name, fn) => (call, callback) => {
      fn(call.request, call).then(
        (res) => callback(null, res),
        (err) => {
          if (!appErrorOf(err)) log.error('agent rpc failed', { rpc: name, err });
          callback(toGrpcError(err));
        },
      );
    },

    markSeen: (agentId, heartbeat) => markAgentSeen(db, agentId, heartbeat),

    // Another coordinator behind the same load balancer may have registered the agent: Postgres knows.
    sessionOf: async (agentId) => {
      const known = registry.touch(agentId);
      if (known) return known;
      const row = await db.one<{ name: string; capabilities: { task_types?: string[] } }>(
        'SELECT name, capabilities FROM agents WHERE id = $1',
        [agentId],
      );
      if (!row) throw new AppError(404, 'unknown_agent', `agent ${agentId} is not registered`);
      const session = { id: agentId, name: row.name, taskTypes: row.capabilities.task_types ?? [], lastSeen: Date.now() };
      registry.sessions.set(agentId, session);
      return session;
    },

    reportJson: async (taskId, token, field, text) => {
      try {
        return JSON.parse(text);
      } catch {
        return queue.refuse(taskId, token, `${field} is not valid JSON`);
      }
    },
  };
}
