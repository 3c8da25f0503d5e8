import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../common/src/logger.js';
import { isTaskType, type TaskType } from '../../common/src/tasks.js';
import type { AgentConfig } from './config.js';
import { CoordinatorClient, LeaseLostError } from './coordinator-client.js';
import { probeHost, type HostCapabilities } from './host/probe-host.js';
import { TaskError, type TaskContext } from './tasks/task-context.js';
import { TASK_HANDLERS, checkTaskPrerequisites } from './tasks/registry.js';
import { uploadObject } from './tasks/download.js';

interface LeasedTask {
  task_id: string;
  type: string;
  lease_token: string;
  attempt: number;
  payload_json: string;
}

interface Running {
  task: LeasedTask;
  abort: AbortController;
  /** Why it was aborted: a lost lease, a cancel from the coordinator, or shutdown. */
  abortReason?: 'lease_lost' | 'cancelled' | 'shutdown';
}

/** The node-agent daemon: probes its host, registers, and runs leased tasks in bounded slots. */
export class Agent {
  private readonly client: CoordinatorClient;
  private agentId = '';
  private host!: HostCapabilities;
  private heartbeatMs = 10_000;
  private readonly running = new Map<string, Running>();
  private stopping = false;
  private slots: Promise<void>[] = [];
  private heartbeatTimer?: NodeJS.Timeout;
  private taskTypes: TaskType[] = [];

  constructor(private readonly config: AgentConfig, private readonly log: Logger) {
    this.client = new CoordinatorClient(config.coordinator, config.clusterToken, config.tlsCaPath);
  }

  async start(): Promise<void> {
    this.host = await probeHost({ ffmpegPath: this.config.ffmpegPath, workDir: this.config.workDir }, this.log);
    // Refuse at start, not in the middle of a job, when a tool a task needs is missing.
    this.taskTypes = [];
    for (const t of this.config.taskTypes) {
      if (!isTaskType(t)) throw new Error(`unknown task type in AGENT_TASK_TYPES: ${t}`);
      const missing = await checkTaskPrerequisites(t, this.config);
      if (missing) this.log.error('task type disabled: prerequisite missing', { taskType: t, missing });
      else this.taskTypes.push(t);
    }
    if (!this.taskTypes.length) throw new Error('this host can run none of the configured task types');
    await rm(this.config.workDir, { recursive: true, force: true });
    await mkdir(this.config.workDir, { recursive: true });
    await this.register();
    this.log.info('agent ready', { agentId: this.agentId, host: this.host, taskTypes: this.taskTypes, slots: this.config.maxConcurrentTasks });
    this.heartbeatTimer = setInterval(() => this.heartbeat(), this.heartbeatMs);
    for (let i = 0; i < this.config.maxConcurrentTasks; i++) this.slots.push(this.slotLoop(i));
  }

  private async register(): Promise<void> {
    const res = await this.client.call('RegisterAgent', {
      name: this.config.name,
      version: '0.1.0',
      capabilities: {
        cpu_cores: this.host.cpuCores,
        gpus: this.host.gpus.map((g) => ({ name: g.name, memory_bytes: g.memoryBytes })),
        nvenc_available: this.host.nvencAvailable,
        onnx_providers: this.host.onnxProviders.map((p) => `EXECUTION_PROVIDER_${p}`),
        free_disk_bytes: this.host.freeDiskBytes,
        task_types: this.taskTypes,
        max_concurrent_tasks: this.config.maxConcurrentTasks,
        ffmpeg_version: this.host.ffmpegVersion,
        video_encoders: this.host.videoEncoders,
      },
    }, { retryForMs: 10 * 60_000 });
    this.agentId = res.agent_id;
    this.heartbeatMs = res.heartbeat_interval_ms || 10_000;
  }

  private heartbeat(): void {
    this.client.call('Heartbeat', { agent_id: this.agentId, running_tasks: this.running.size }, { retryForMs: 5_000 })
      .then(async (res) => {
        // The coordinator restarted and forgot us: register again, our leases stay valid in Postgres.
        if (res.reregister && !this.stopping) await this.register();
      })
      .catch((err) => this.log.warn('heartbeat failed', { err: err.message }));
  }

  private async slotLoop(slot: number): Promise<void> {
    while (!this.stopping) {
      try {
        const res = await this.client.call<{ task?: LeasedTask }>('LeaseTask', { agent_id: this.agentId, task_types: this.taskTypes, wait_ms: this.config.leaseWaitMs }, {
          deadlineMs: this.config.leaseWaitMs + 10_000,
          retryForMs: 24 * 3600_000,
        });
        if (res.task && res.task.task_id) await this.runTask(res.task);
      } catch (err: any) {
        if (this.stopping) break;
        if (err?.code === 5 /* NOT_FOUND: unknown agent */) await this.register().catch(() => undefined);
        this.log.warn('lease loop error', { slot, err: err?.message ?? String(err) });
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  private async runTask(task: LeasedTask): Promise<void> {
    const log = this.log.child({ taskId: task.task_id, type: task.type, attempt: task.attempt });
    const running: Running = { task, abort: new AbortController() };
    this.running.set(task.task_id, running);
    const workDir = path.join(this.config.workDir, task.task_id);
    await mkdir(workDir, { recursive: true });
    const reporter = new ProgressReporter(this.client, task, log, (reason) => {
      running.abortReason = reason;
      running.abort.abort();
    });
    const ctx: TaskContext = {
      taskId: task.task_id,
      attempt: task.attempt,
      payload: JSON.parse(task.payload_json || '{}'),
      workDir,
      signal: running.abort.signal,
      log,
      config: this.config,
      host: this.host,
      progress: (fraction, stage, message) => reporter.report(fraction, stage, message),
      facts: (facts) => reporter.addFacts(facts),
      upload: async (localPath, name, contentType) => {
        const res = await this.client.call('CreateUploadUrl', { task_id: task.task_id, lease_token: task.lease_token, name, content_type: contentType });
        const sizeBytes = await uploadObject(res.url, localPath, contentType, running.abort.signal);
        return { objectKey: res.object_key, sizeBytes };
      },
    };
    const heartbeat = setInterval(() => reporter.beat(), this.heartbeatMs);
    log.info('task started');
    try {
      const handler = TASK_HANDLERS[task.type as TaskType];
      if (!handler) throw new TaskError(`this agent has no handler for ${task.type}`, 'UNSUPPORTED', true);
      const result = await handler.run(ctx);
      await reporter.flush();
      await this.client.call('CompleteTask', { task_id: task.task_id, lease_token: task.lease_token, result_json: JSON.stringify(result) }, { retryForMs: 10 * 60_000 });
      log.info('task completed');
    } catch (err: any) {
      await this.settleFailure(task, running, err, log);
    } finally {
      clearInterval(heartbeat);
      this.running.delete(task.task_id);
      await rm(workDir, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  private async settleFailure(task: LeasedTask, running: Running, err: any, log: ReturnType<Logger['child']>): Promise<void> {
    const ids = { task_id: task.task_id, lease_token: task.lease_token };
    try {
      if (running.abortReason === 'lease_lost' || err instanceof LeaseLostError) {
        log.warn('lease lost; work stopped');
      } else if (running.abortReason === 'shutdown') {
        await this.client.call('ReleaseTask', { ...ids, reason: 'agent shutting down' }, { retryForMs: 5_000 });
        log.info('task handed back (shutdown)');
      } else if (running.abortReason === 'cancelled') {
        await this.client.call('FailTask', { ...ids, message: 'Cancelled', retryable: false, code: 'CANCELLED' });
        log.info('task cancelled');
      } else if (err instanceof TaskError) {
        await this.client.call('FailTask', { ...ids, message: err.message, retryable: err.retryable, code: err.code }, { retryForMs: 10 * 60_000 });
        log.warn('task failed', { code: err.code, message: err.message });
      } else {
        log.error('task crashed', { err });
        await this.client.call('FailTask', { ...ids, message: 'Internal processing error: ' + String(err?.message ?? err).slice(0, 300), retryable: true, code: 'INTERNAL' }, { retryForMs: 10 * 60_000 });
      }
    } catch (reportErr: any) {
      if (!(reportErr instanceof LeaseLostError)) log.error('could not report the failure', { err: reportErr?.message });
    }
  }

  /** SIGTERM: stop leasing, abort running work, hand leases back with a reason, clean temp files. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    clearInterval(this.heartbeatTimer);
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
    private readonly onAbort: (reason: 'lease_lost' | 'cancelled') => void,
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
    this.pending = this.client.call('ReportProgress', {
      task_id: this.task.task_id, lease_token: this.task.lease_token, progress: snapshot.fraction, stage: snapshot.stage, message: snapshot.message,
      facts_json: Object.keys(facts).length ? JSON.stringify(facts) : '',
    }, { retryForMs: 60_000 }).then((res) => {
      // Answered: the coordinator acted on these facts; later reports need not carry them again.
      if (this.unsentFacts === facts) this.unsentFacts = {};
      if (res.cancel_requested) this.onAbort('cancelled');
    }, (err) => {
      if (err instanceof LeaseLostError) this.onAbort('lease_lost');
      else this.log.warn('progress report failed', { err: err?.message });
    }).finally(() => {
      this.pending = undefined;
      if (this.dirty) this.send();
    });
  }
}
