import { mediaToolWarnings } from '@shorts/common/media/tools';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { withLogFields, type Logger } from '@shorts/common/logger';
import { isTaskType, type TaskType } from '@shorts/common/tasks';
import type { AgentConfig } from './config.js';
import { CoordinatorClient, LeaseLostError } from './coordinator-client.js';
import { freeDiskBytes, probeHost, type HostCapabilities } from './host/probe-host.js';
import { sharedFaceDetector } from './reframe/detector-factory.js';
import { TaskError, type TaskContext, type TaskHandler } from './tasks/task-context.js';
import { parseTaskPayload, type TaskLeasePayload, type TaskResult } from '@shorts/common/tasks/contracts';
import type { TaskFailureCode } from '@shorts/common/tasks/failure-codes';
import { TASK_HANDLERS, checkTaskPrerequisites, needsFaceDetector } from './tasks/registry.js';
import { StoredObjectCache } from './tasks/object-cache.js';
import { uploadObject } from './tasks/download.js';
import { chooseBackend } from './transcribe/transcriber.js';
import { createAgentMetrics, serveAgentMetrics, type AgentMetrics } from './metrics/agent-metrics.js';
import type { Task__Output } from '@shorts/common/generated/shorts/v1/Task';

type LeasedTask = Task__Output;

/** Why running work was stopped: its lease is gone, the coordinator asked for a cancel or refused
 *  what the task reported (it has failed the task already), the task ran past its time limit, or
 *  the agent is shutting down. */
type AbortReason = 'lease_lost' | 'cancelled' | 'refused' | 'shutdown' | 'time_limit';

interface Running {
  task: LeasedTask;
  abort: AbortController;
  abortReason?: AbortReason;
}

/** The node-agent daemon: probes its host, registers, and runs leased tasks in bounded slots. */
export class Agent {
  private readonly client: CoordinatorClient;
  private agentId = '';
  private host!: HostCapabilities;
  private heartbeatMs = 10_000;
  private readonly running = new Map<string, Running>();
  private readonly objects: StoredObjectCache;
  private stopping = false;
  private slots: Promise<void>[] = [];
  private heartbeatTimer?: NodeJS.Timeout;
  private heartbeatInFlight = false;
  private taskTypes: TaskType[] = [];
  /** The operator drained this agent: running tasks finish, no new lease is asked for. */
  private draining = false;
  /** The drained slot loops' wake-ups, called when the drain is lifted (or the agent stops): they
   *  ask for work at once, not on their next look. */
  private readonly drainWaiters = new Set<() => void>();
  readonly metrics: AgentMetrics = createAgentMetrics({});
  private metricsServer?: { port: number; close(): Promise<void> };

  constructor(
    private readonly config: AgentConfig,
    private readonly log: Logger,
  ) {
    this.client = new CoordinatorClient(config.coordinator, config.clusterToken, config.tlsCaPath);
    this.objects = new StoredObjectCache(path.join(config.workDir, 'object-cache'), config.objectCacheBytes, log);
  }

  async start(onReady?: () => Promise<void>): Promise<void> {
    const tools = { ffmpegPath: this.config.ffmpegPath, ffprobePath: this.config.ffprobePath, source: this.config.mediaToolsSource };
    for (const w of mediaToolWarnings(tools)) this.log.warn(w.message, w.fields);
    this.host = await probeHost({ ffmpegPath: this.config.ffmpegPath, workDir: this.config.workDir }, this.log);
    // Refuse at start, not in the middle of a job, when a tool a task needs is missing.
    this.taskTypes = [];
    for (const t of this.config.taskTypes) {
      if (!isTaskType(t)) throw new Error(`unknown task type in AGENT_TASK_TYPES: ${t}`);
      const missing = await checkTaskPrerequisites(t, this.config);
      if (missing) this.log.error('task type disabled: prerequisite missing', { taskType: t, missing });
      else this.taskTypes.push(t);
    }
    if (this.taskTypes.some(needsFaceDetector)) await this.loadFaceDetector();
    if (!this.taskTypes.length) throw new Error('this host can run none of the configured task types');
    await rm(this.config.workDir, { recursive: true, force: true });
    await mkdir(this.config.workDir, { recursive: true });
    await this.register();
    this.metrics.encoderKnown(this.host.nvencAvailable ? 'nvenc' : 'x264');
    if (this.config.metricsPort !== undefined) {
      this.metricsServer = await serveAgentMetrics(
        this.metrics,
        { host: this.config.metricsHost, port: this.config.metricsPort },
        this.log,
      );
      this.log.info('metrics listening', { host: this.config.metricsHost, port: this.metricsServer.port });
    }
    // The supervisor hears "ready" before anyone reads it in the log: one who kills the agent on
    // seeing that line must find it treated as a running agent, not one that failed to start.
    await onReady?.();
    this.log.info('agent ready', {
      agentId: this.agentId,
      host: this.host,
      taskTypes: this.taskTypes,
      slots: this.config.maxConcurrentTasks,
    });
    this.heartbeatTimer = setInterval(() => this.heartbeat(), this.heartbeatMs);
    for (let i = 0; i < this.config.maxConcurrentTasks; i++) this.slots.push(this.slotLoop(i));
  }

  /** The reframing face detector is created once for all tasks; a configured model that is missing
   *  disables the types that need it (analysis, a short's reframing) at start, with the reason,
   *  rather than failing every job later. */
  private async loadFaceDetector(): Promise<void> {
    try {
      const detector = await sharedFaceDetector(this.config, this.log);
      this.host.faceDetector = { name: detector.name, provider: detector.provider };
      this.log.info('face detector ready', { detector: detector.name, provider: detector.provider });
    } catch (err) {
      for (const taskType of this.taskTypes.filter(needsFaceDetector))
        this.log.error('task type disabled: prerequisite missing', { taskType, missing: `face detector: ${(err as Error).message}` });
      this.taskTypes = this.taskTypes.filter((t) => !needsFaceDetector(t));
    }
  }

  private async register(): Promise<void> {
    const res = await this.client.call(
      'RegisterAgent',
      {
        name: this.config.name,
        version: '0.1.0',
        capabilities: {
          cpu_cores: this.host.cpuCores,
          gpus: this.host.gpus.map((g) => ({ name: g.name, memory_bytes: g.memoryBytes })),
          nvenc_available: this.host.nvencAvailable,
          onnx_providers: this.host.onnxProviders.map((p) => `EXECUTION_PROVIDER_${p}` as const),
          free_disk_bytes: this.host.freeDiskBytes,
          task_types: this.taskTypes,
          max_concurrent_tasks: this.config.maxConcurrentTasks,
          ffmpeg_version: this.host.ffmpegVersion,
          video_encoders: this.host.videoEncoders,
          face_detector: this.host.faceDetector?.name ?? '',
          face_detector_provider: this.host.faceDetector
            ? (`EXECUTION_PROVIDER_${this.host.faceDetector.provider}` as const)
            : 'EXECUTION_PROVIDER_UNSPECIFIED',
          models: this.host.models,
          // The recogniser analysis runs with, for placement (transcriber:<name> tags).
          transcriber: this.taskTypes.includes('analyze-video') ? chooseBackend(this.config.transcriber).kind : '',
        },
      },
      { retryForMs: 10 * 60_000 },
    );
    this.agentId = res.agent_id;
    this.heartbeatMs = res.heartbeat_interval_ms || 10_000;
  }

  private heartbeat(): void {
    // While the coordinator is unreachable each call waits out its deadline; one at a time, or they
    // pile up by the dozen during a network cut.
    if (this.heartbeatInFlight) return;
    this.heartbeatInFlight = true;
    freeDiskBytes(this.config.workDir)
      .catch(() => 0)
      .then((free) =>
        this.client.call(
          'Heartbeat',
          { agent_id: this.agentId, running_tasks: this.running.size, free_disk_bytes: free },
          { retryForMs: 5_000 },
        ),
      )
      .then(async (res) => {
        // The coordinator restarted and forgot us: register again, our leases stay valid in Postgres.
        if (res.reregister && !this.stopping) await this.register();
        else this.setDraining(!!res.draining);
      })
      .catch((err) => this.log.warn('heartbeat failed', { err: err.message }))
      .finally(() => {
        this.heartbeatInFlight = false;
      });
  }

  private setDraining(draining: boolean): void {
    if (draining === this.draining) return;
    this.draining = draining;
    if (draining) this.log.info('draining: finishing running tasks, taking no new work', { running: this.running.size });
    else {
      this.log.info('drain lifted: taking work again');
      this.wakeDrainWaiters();
    }
  }

  /** Resolves when the drain is lifted or the agent stops, or after `ms` at the latest. */
  private untilDrainLifted(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.drainWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.drainWaiters.add(done);
    });
  }

  private wakeDrainWaiters(): void {
    for (const wake of [...this.drainWaiters]) wake();
  }

  private async slotLoop(slot: number): Promise<void> {
    while (!this.stopping) {
      if (this.draining) {
        // Heartbeats tell us when the drain is lifted; the timeout only bounds a missed wake-up.
        await this.untilDrainLifted(Math.min(this.heartbeatMs, 2_000));
        continue;
      }
      try {
        const res = await this.client.call(
          'LeaseTask',
          { agent_id: this.agentId, task_types: this.taskTypes, wait_ms: this.config.leaseWaitMs },
          {
            deadlineMs: this.config.leaseWaitMs + 10_000,
            retryForMs: 24 * 3600_000,
          },
        );
        if (res.draining) this.setDraining(true);
        const leased = res.task;
        // Every line logged for the task, by any of the agent's loggers, carries the API request's id.
        if (leased && leased.task_id)
          await (leased.request_id ? withLogFields({ requestId: leased.request_id }, () => this.runTask(leased)) : this.runTask(leased));
      } catch (err: unknown) {
        if (this.stopping) break;
        if (grpcCode(err) === grpc.status.NOT_FOUND /* unknown agent */) await this.register().catch(() => undefined);
        this.log.warn('lease loop error', { slot, err: messageOf(err) });
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  private async runTask(task: LeasedTask): Promise<void> {
    const log = this.log.child({ taskId: task.task_id, type: task.type, attempt: task.attempt });
    const running: Running = { task, abort: new AbortController() };
    // Keyed by lease, not task: after a lost lease this agent may lease the same task again while
    // the old attempt is still winding down, and the old one's clean-up must not touch the new one.
    this.running.set(task.lease_token, running);
    const workDir = path.join(this.config.workDir, `${task.task_id}-${task.attempt}`);
    const reporter = new ProgressReporter(this.client, task, log, (reason) => {
      running.abortReason = reason;
      running.abort.abort();
    });
    const heartbeat = setInterval(() => reporter.beat(), this.heartbeatMs);
    const limitSec = this.config.taskTimeLimitsSec[task.type as TaskType];
    // Aborting kills the task's ffmpeg/ONNX children (every one of them runs on ctx.signal).
    const timeLimit = limitSec
      ? setTimeout(() => {
          running.abortReason = 'time_limit';
          running.abort.abort();
        }, limitSec * 1000)
      : undefined;
    log.info('task started');
    const started = performance.now();
    let outcome = 'failed';
    // Everything after the lease runs inside the try: whatever throws, the task is failed or handed
    // back, never left leased until its lease expires.
    try {
      await mkdir(workDir, { recursive: true });
      const ctx: Omit<TaskContext, 'payload'> = {
        taskId: task.task_id,
        attempt: task.attempt,
        workDir,
        signal: running.abort.signal,
        log,
        config: this.config,
        host: this.host,
        metrics: this.metrics,
        objects: this.objects,
        progress: (fraction, stage, message) => reporter.report(fraction, stage, message),
        facts: (facts) => reporter.addFacts(facts),
        upload: async (localPath, name, contentType) => {
          const res = await this.client.call('CreateUploadUrl', {
            task_id: task.task_id,
            lease_token: task.lease_token,
            name,
            content_type: contentType,
          });
          const sizeBytes = await uploadObject(res.url, localPath, contentType, running.abort.signal);
          return { objectKey: res.object_key, sizeBytes };
        },
      };
      if (!isTaskType(task.type)) throw new TaskError(`this agent has no handler for ${task.type}`, 'UNSUPPORTED', true);
      const result = await runHandler(task.type, task.payload_json, ctx);
      const seconds = (performance.now() - started) / 1000;
      const analysedSec =
        task.type === 'analyze-range' && 'owns' in result
          ? result.owns.end - result.owns.start
          : task.type === 'analyze-video' && 'shorts' in result && !result.ranged
            ? result.durationSec
            : 0;
      if (analysedSec > 0) this.metrics.analysed(analysedSec, seconds);
      await reporter.flush();
      await this.client.call(
        'CompleteTask',
        { task_id: task.task_id, lease_token: task.lease_token, result_json: JSON.stringify(result) },
        { retryForMs: 10 * 60_000 },
      );
      outcome = 'completed';
      log.info('task completed');
    } catch (err: unknown) {
      outcome =
        running.abortReason === 'lease_lost' || err instanceof LeaseLostError
          ? 'lease_lost'
          : running.abortReason === 'shutdown'
            ? 'released'
            : 'failed';
      await this.settleFailure(task, running, err, log);
    } finally {
      this.metrics.taskEnded(task.type, outcome, (performance.now() - started) / 1000);
      clearInterval(heartbeat);
      clearTimeout(timeLimit);
      this.running.delete(task.lease_token);
      await rm(workDir, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  private async settleFailure(task: LeasedTask, running: Running, err: unknown, log: ReturnType<Logger['child']>): Promise<void> {
    const ids = { task_id: task.task_id, lease_token: task.lease_token };
    try {
      if (running.abortReason === 'refused') {
        log.warn('the coordinator refused what the task reported; work stopped');
      } else if (running.abortReason === 'lease_lost' || err instanceof LeaseLostError) {
        log.warn('lease lost; work stopped');
      } else if (running.abortReason === 'shutdown') {
        await this.client.call('ReleaseTask', { ...ids, reason: 'agent shutting down' }, { retryForMs: 5_000 });
        log.info('task handed back (shutdown)');
      } else if (running.abortReason === 'time_limit') {
        const limitSec = this.config.taskTimeLimitsSec[task.type as TaskType];
        const message = `The ${task.type} task ran past its time limit of ${formatLimit(limitSec)} and was stopped`;
        await this.client.call(
          'FailTask',
          { ...ids, message, retryable: false, code: 'TIME_LIMIT' satisfies TaskFailureCode },
          { retryForMs: 10 * 60_000 },
        );
        log.warn('task stopped: time limit', { limitSec });
      } else if (running.abortReason === 'cancelled') {
        await this.client.call('FailTask', { ...ids, message: 'Cancelled', retryable: false, code: 'CANCELLED' satisfies TaskFailureCode });
        log.info('task cancelled');
      } else if (err instanceof TaskError) {
        await this.client.call(
          'FailTask',
          { ...ids, message: err.message, retryable: err.retryable, code: err.code },
          { retryForMs: 10 * 60_000 },
        );
        log.warn('task failed', { code: err.code, message: err.message });
      } else if ((err as NodeJS.ErrnoException | undefined)?.code === 'ENOSPC') {
        // The host's fault, not the video's: retryable, another agent (or this one, once space is
        // freed) can run it.
        const message = `The agent ${this.config.name} ran out of disk space in its work folder (no space left on device)`;
        await this.client.call(
          'FailTask',
          { ...ids, message, retryable: true, code: 'NO_SPACE' satisfies TaskFailureCode },
          { retryForMs: 10 * 60_000 },
        );
        log.error('task failed: work folder full', { workDir: this.config.workDir });
      } else {
        log.error('task crashed', { err });
        await this.client.call(
          'FailTask',
          {
            ...ids,
            message: 'Internal processing error: ' + messageOf(err).slice(0, 300),
            retryable: true,
            code: 'INTERNAL' satisfies TaskFailureCode,
          },
          { retryForMs: 10 * 60_000 },
        );
      }
    } catch (reportErr: unknown) {
      // Refused: the lease went to another agent while this one could not reach the coordinator.
      if (reportErr instanceof LeaseLostError) log.warn('lease lost; failure report refused');
      else log.error('could not report the failure', { err: messageOf(reportErr) });
    }
  }

  /** SIGTERM: stop leasing, abort running work, hand leases back with a reason, clean temp files. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.wakeDrainWaiters();
    clearInterval(this.heartbeatTimer);
    await this.metricsServer?.close();
    for (const r of this.running.values()) {
      r.abortReason = 'shutdown';
      r.abort.abort();
    }
    // Slots blocked in a long-poll end when the client closes.
    const settle = Promise.allSettled(this.slots);
    const deadline = new Promise((r) => setTimeout(r, 8_000));
    await Promise.race([this.waitRunning(), deadline]);
    this.client.close();
    await Promise.race([settle, new Promise((r) => setTimeout(r, 1000))]);
    await rm(this.config.workDir, { recursive: true, force: true }).catch(() => undefined);
    this.log.info('agent stopped');
  }

  private async waitRunning(): Promise<void> {
    while (this.running.size) await new Promise((r) => setTimeout(r, 50));
  }
}

/** The gRPC status of a failed call, if it was one. */
const grpcCode = (err: unknown): grpc.status | undefined =>
  err instanceof Error && 'code' in err ? (err as grpc.ServiceError).code : undefined;
const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Parses the payload with the task type's contract and runs its handler; a payload that does not
 *  parse fails the task for good. */
async function runHandler<T extends TaskType>(type: T, payloadJson: string, ctx: Omit<TaskContext<T>, 'payload'>): Promise<TaskResult<T>> {
  let payload: TaskLeasePayload<T>;
  try {
    payload = parseTaskPayload(type, JSON.parse(payloadJson || '{}'));
  } catch (err) {
    throw new TaskError(`The task's input could not be read: ${(err as Error).message}`, 'BAD_PAYLOAD', false);
  }
  const handler: TaskHandler<T> = TASK_HANDLERS[type];
  return handler.run({ ...ctx, payload });
}

/** Sends progress in order, at most a few times a second, and heartbeats between updates.
 *  A lost lease or a cancel request aborts the task. */
class ProgressReporter {
  private last = { fraction: 0, stage: '', message: '' };
  /** Facts no answered report has carried yet; a report that is lost or coalesced loses none. */
  private unsentFacts: Record<string, unknown> = {};
  private pending?: Promise<void>;
  private dirty = false;
  private lastSent = 0;

  constructor(
    private readonly client: CoordinatorClient,
    private readonly task: LeasedTask,
    private readonly log: Logger,
    private readonly onAbort: (reason: 'lease_lost' | 'cancelled' | 'refused') => void,
  ) {}

  report(fraction: number, stage?: string, message?: string): void {
    const stageChanged = stage !== undefined && stage !== this.last.stage;
    this.last = { fraction: Math.max(this.last.fraction, fraction), stage: stage ?? this.last.stage, message: message ?? '' };
    if (stageChanged) this.log.info('task stage', { stage, progress: Number(this.last.fraction.toFixed(3)) });
    this.dirty = true;
    if (stageChanged || Date.now() - this.lastSent > 500) this.send();
  }

  /** Resolves once a report carrying the facts has been answered (and the task aborted if refused). */
  async addFacts(facts: Record<string, unknown>): Promise<void> {
    this.unsentFacts = { ...this.unsentFacts, ...facts };
    this.dirty = true;
    this.send(); // with one in flight, its `finally` sends again with the facts
    while (this.pending) await this.pending;
  }

  beat(): void {
    this.dirty = true;
    this.send();
  }

  async flush(): Promise<void> {
    if (this.dirty) this.send();
    await this.pending;
  }

  private send(): void {
    if (this.pending) return; // one in flight; the next send carries the latest state
    this.dirty = false;
    this.lastSent = Date.now();
    const snapshot = { ...this.last };
    const facts = this.unsentFacts;
    this.pending = this.client
      .call(
        'ReportProgress',
        {
          task_id: this.task.task_id,
          lease_token: this.task.lease_token,
          progress: snapshot.fraction,
          stage: snapshot.stage,
          message: snapshot.message,
          facts_json: Object.keys(facts).length ? JSON.stringify(facts) : '',
        },
        { retryForMs: 60_000 },
      )
      .then(
        (res) => {
          // Answered: the coordinator acted on these facts; later reports need not carry them again.
          if (this.unsentFacts === facts) this.unsentFacts = {};
          if (res.cancel_requested) this.onAbort('cancelled');
        },
        (err: unknown) => {
          if (err instanceof LeaseLostError) this.onAbort('lease_lost');
          else if (grpcCode(err) === grpc.status.INVALID_ARGUMENT) {
            this.log.error('the coordinator refused a progress report', { err: messageOf(err) });
            this.onAbort('refused');
          } else this.log.warn('progress report failed', { err: messageOf(err) });
        },
      )
      .finally(() => {
        this.pending = undefined;
        if (this.dirty) this.send();
      });
  }
}

const formatLimit = (sec: number) => (sec % 3600 === 0 ? `${sec / 3600} h` : sec % 60 === 0 ? `${sec / 60} min` : `${sec} s`);
