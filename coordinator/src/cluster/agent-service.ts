import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import { timingSafeEqual } from 'node:crypto';
import { isTransientDbError, type Db } from '../db/db.js';
import { taskWritesName } from '../files/task-objects.js';
import { AppError, appErrorOf } from '../errors.js';
import { newId } from '../ids.js';
import type { Logger } from '@shorts/common/logger';
import { loadAgentProto, type AgentRpc } from '@shorts/common/proto';
import type { AgentServiceHandlers } from '@shorts/common/generated/shorts/v1/AgentService';
import { isTaskType, TASK_STATES } from '@shorts/common/tasks';
import { isTaskFailureCode } from '@shorts/common/tasks/failure-codes';
import { capabilityTags } from '@shorts/common/placement';
import { heartbeatIntervalMs, markAgentSeen } from './liveness.js';
import type { Metrics } from '../metrics/metrics.js';
import { LEASE_LOST, taskObjectKey, type TaskQueue } from '../tasks/task-queue.js';
import type { ObjectUrls } from '../storage/urls.js';
import type { ObjectStore } from '../storage/object-store.js';
import { leaseTag, taskUploadLimit } from '../files/task-uploads.js';

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

interface AgentSession {
  id: string;
  name: string;
  taskTypes: string[];
  lastSeen: number;
}

/** The coordinator's side of shorts.v1.AgentService: thin handlers over the task queue. */
export class AgentRegistry {
  readonly sessions = new Map<string, AgentSession>();
  /** @param leaseTtlMs how long an agent may be silent and still count as connected (./liveness.ts). */
  constructor(private readonly leaseTtlMs: number) {}

  touch(id: string): AgentSession | undefined {
    const s = this.sessions.get(id);
    if (s) s.lastSeen = Date.now();
    return s;
  }

  /** Agents this process heard from within a lease TTL (three heartbeats). */
  connectedCount(): number {
    const cutoff = Date.now() - this.leaseTtlMs;
    let n = 0;
    for (const s of this.sessions.values()) if (s.lastSeen >= cutoff) n++;
    return n;
  }
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

export function createAgentServiceHandlers(deps: AgentServiceDeps, registry: AgentRegistry): AgentServiceHandlers {
  const { queue, log, db } = deps;

  // Every RPC (its caller authenticated by clusterTokenInterceptor): run, map errors to gRPC statuses
  // in one place.
  const unary =
    <K extends AgentRpc, Req, Res>(
      name: K,
      fn: (req: Req, call: grpc.ServerUnaryCall<Req, Res>) => Promise<Res>,
    ): grpc.handleUnaryCall<Req, Res> =>
    (call, callback) => {
      fn(call.request, call).then(
        (res) => callback(null, res),
        (err) => {
          if (!appErrorOf(err)) log.error('agent rpc failed', { rpc: name, err });
          callback(toGrpcError(err));
        },
      );
    };

  const markSeen = (agentId: string, heartbeat?: { runningTasks: number; freeDiskBytes: number }) => markAgentSeen(db, agentId, heartbeat);

  // Another coordinator behind the same load balancer may have registered the agent: Postgres knows.
  const sessionOf = async (agentId: string) => {
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
  };

  const reportJson = async (taskId: string, token: string, field: string, text: string): Promise<unknown> => {
    try {
      return JSON.parse(text);
    } catch {
      return queue.refuse(taskId, token, `${field} is not valid JSON`);
    }
  };

  return {
    RegisterAgent: unary('RegisterAgent', async (req) => {
      const caps = req.capabilities;
      if (!caps) throw new AppError(400, 'bad_capabilities', "RegisterAgent needs the host's capabilities");
      const taskTypes = caps.task_types.filter(isTaskType);
      const id = newId();
      const tags = capabilityTags(caps);
      await db.query(
        `INSERT INTO agents (id, name, capabilities, task_types, capability_tags, max_slots, free_disk_bytes) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [
          id,
          req.name || 'agent',
          { ...caps, task_types: taskTypes },
          taskTypes,
          tags,
          Math.max(1, Number(caps.max_concurrent_tasks) || 1),
          Number(caps.free_disk_bytes) || null,
        ],
      );
      registry.sessions.set(id, { id, name: req.name, taskTypes, lastSeen: Date.now() });
      log.info('agent registered', {
        agentId: id,
        name: req.name,
        taskTypes,
        tags,
        cores: caps.cpu_cores,
        slots: caps.max_concurrent_tasks,
      });
      return { agent_id: id, lease_ttl_ms: deps.leaseTtlMs, heartbeat_interval_ms: heartbeatIntervalMs(deps.leaseTtlMs) };
    }),

    LeaseTask: unary('LeaseTask', async (req, call) => {
      const session = await sessionOf(req.agent_id);
      // A draining agent finishes what it has and takes nothing new; it learns so here.
      if ((await markSeen(session.id)) === 'draining') return { draining: true };
      const types = req.task_types.length ? req.task_types.filter((t) => session.taskTypes.includes(t)) : session.taskTypes;
      const abort = new AbortController();
      call.on('cancelled', () => abort.abort());
      const waitMs = Math.min(req.wait_ms || deps.leaseWaitMs, deps.leaseWaitMs);
      const task = await queue.lease(session.id, types, waitMs, abort.signal);
      registry.touch(session.id);
      if (!task) return {};
      // From here the lease is committed: if the agent cannot receive it, hand it back at once
      // rather than let it expire and cost the task an attempt.
      let payload: Record<string, unknown>;
      try {
        payload = await queue.leasePayload(task);
      } catch (err) {
        await queue
          .handBack(task, `could not prepare the lease: ${err instanceof Error ? err.message : String(err)}`.slice(0, 300), {
            prepareFailed: true,
          })
          .catch((handBackErr) => log.error('could not hand back a lease', { taskId: task.id, err: handBackErr }));
        throw err;
      }
      if (abort.signal.aborted || call.cancelled) {
        await queue.handBack(task, 'the agent left before it received the lease');
        return {};
      }
      return {
        task: {
          task_id: task.id,
          type: task.type,
          lease_token: task.leaseToken ?? '',
          attempt: task.attempts,
          lease_expires_at_ms: task.leaseExpiresAt ? new Date(task.leaseExpiresAt).getTime() : 0,
          payload_json: JSON.stringify(payload),
        },
      };
    }),

    // Facts and results are read with the task type's contract (common/src/tasks/<type>.ts) by the
    // domain; what is not even JSON is refused here the same way.
    ReportProgress: unary('ReportProgress', async (req) => {
      const facts = req.facts_json ? await reportJson(req.task_id, req.lease_token, 'facts_json', req.facts_json) : undefined;
      const res = await queue.progress(req.task_id, req.lease_token, req.progress, req.stage || null, req.message, facts);
      return { cancel_requested: res.cancelRequested };
    }),

    CompleteTask: unary('CompleteTask', async (req) => {
      await queue.complete(
        req.task_id,
        req.lease_token,
        await reportJson(req.task_id, req.lease_token, 'result_json', req.result_json || '{}'),
      );
      return {};
    }),

    FailTask: unary('FailTask', async (req) => {
      // A code this coordinator does not know (none of its own agents sends one) is a plain failure.
      const code = req.code ?? '';
      const res = await queue.fail(
        req.task_id,
        req.lease_token,
        req.message || 'task failed',
        req.retryable,
        isTaskFailureCode(code) ? code : 'TASK_FAILED',
      );
      return { will_retry: res.willRetry };
    }),

    ReleaseTask: unary('ReleaseTask', async (req) => {
      await queue.release(req.task_id, req.lease_token, req.reason || 'released by agent');
      return {};
    }),

    CreateUploadUrl: unary('CreateUploadUrl', async (req) => {
      const task = await queue.get(req.task_id);
      if (!task || task.state !== TASK_STATES.leased || task.leaseToken !== req.lease_token) {
        throw new AppError(409, LEASE_LOST, `Task ${req.task_id} is no longer leased with this token`);
      }
      if (!/^(?!\.)[A-Za-z0-9._-]{1,100}$/.test(req.name)) throw new AppError(400, 'bad_name', 'upload name must be a plain file name');
      if (!taskWritesName(task.type, req.name))
        throw new AppError(400, 'bad_name', `${task.type} does not write an object named ${req.name}`);
      const key = taskObjectKey(task, req.name);
      const maxBytes = await taskUploadLimit(deps.store, task, req.name, deps.agentUploadMaxBytes);
      const { url, expiresAt } = deps.urls.signUpload(key, { taskId: task.id, lease: leaseTag(task.leaseToken), maxBytes });
      return { url, object_key: key, expires_at_ms: expiresAt.getTime() };
    }),

    Heartbeat: unary('Heartbeat', async (req) => {
      const s = await sessionOf(req.agent_id).catch(() => undefined);
      if (!s) return { reregister: true };
      const state = await markSeen(s.id, { runningTasks: Number(req.running_tasks) || 0, freeDiskBytes: Number(req.free_disk_bytes) || 0 });
      return { reregister: false, draining: state === 'draining' };
    }),
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
