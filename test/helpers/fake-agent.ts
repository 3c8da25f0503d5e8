import { CoordinatorClient } from '../../node-agent/src/coordinator-client.js';
import type { ProbeMediaResult } from '@shorts/common/tasks/probe-media';
import { TEST_CLUSTER_TOKEN } from './cluster-token.js';

/** A probe-media result as its contract wants it; `formatName` tells one from another. */
export const probeResult = (formatName: string): ProbeMediaResult => ({ formatName, durationSec: 1, streams: [] });

export interface LeasedTask {
  task_id: string;
  lease_token: string;
  type: string;
  payload_json: string;
  attempt: number;
}

/** An in-process agent that speaks the real protocol but runs no work: for races and benches. */
export class FakeAgent {
  readonly client: CoordinatorClient;
  agentId = '';
  constructor(
    address: string,
    token = TEST_CLUSTER_TOKEN,
    readonly name = 'fake',
  ) {
    this.client = new CoordinatorClient(address, token);
  }

  /** Registers with what a host of that kind would advertise: `nvenc: true` for an NVENC host,
   *  `cuda: true` for the ONNX CUDA provider (its face detector runs there too unless
   *  `detectorOnCuda: false`), `models` for model files, `slots` for its concurrency. An analysis
   *  agent also sends, as the real one does, its transcriber, its face detector and the VAD model;
   *  `analysis: false` leaves them out. */
  async register(
    taskTypes = ['probe-media'],
    host: { nvenc?: boolean; cuda?: boolean; detectorOnCuda?: boolean; models?: string[]; slots?: number; analysis?: boolean } = {},
  ): Promise<this> {
    const analyses = taskTypes.includes('analyze-video') && host.analysis !== false;
    const provider = (host.detectorOnCuda ?? host.cuda) ? ('EXECUTION_PROVIDER_CUDA' as const) : ('EXECUTION_PROVIDER_CPU' as const);
    const res = await this.client.call('RegisterAgent', {
      name: this.name,
      capabilities: {
        cpu_cores: 1,
        task_types: taskTypes,
        max_concurrent_tasks: host.slots ?? 1,
        onnx_providers: ['EXECUTION_PROVIDER_CPU' as const, ...(host.cuda ? ['EXECUTION_PROVIDER_CUDA' as const] : [])],
        nvenc_available: !!host.nvenc,
        video_encoders: ['libx264', ...(host.nvenc ? ['h264_nvenc'] : [])],
        models: [...(analyses ? ['silero-vad'] : []), ...(host.models ?? [])],
        ...(analyses ? { transcriber: 'pocketsphinx', face_detector: 'blazeface-back-256', face_detector_provider: provider } : {}),
      },
    });
    this.agentId = res.agent_id;
    return this;
  }

  async lease(waitMs = 1000): Promise<LeasedTask | undefined> {
    return (await this.leaseCall(waitMs)).task;
  }

  /** The whole answer: a task, or none, and whether the agent is draining. */
  async leaseCall(waitMs = 1000, deadlineMs = waitMs + 5000): Promise<{ task?: LeasedTask; draining: boolean }> {
    const res = await this.client.call(
      'LeaseTask',
      { agent_id: this.agentId, task_types: [], wait_ms: waitMs },
      { deadlineMs, retryForMs: 0 },
    );
    return { task: res.task?.task_id ? res.task : undefined, draining: !!res.draining };
  }

  heartbeat(runningTasks = 0, freeDiskBytes = 0): Promise<{ reregister: boolean; draining: boolean }> {
    return this.client.call(
      'Heartbeat',
      { agent_id: this.agentId, running_tasks: runningTasks, free_disk_bytes: freeDiskBytes },
      { retryForMs: 0 },
    );
  }

  progress(taskId: string, token: string, progress: number, stage = 'working') {
    return this.client.call('ReportProgress', { task_id: taskId, lease_token: token, progress, stage }, { retryForMs: 0 });
  }

  complete(taskId: string, token: string, result: object) {
    return this.client.call(
      'CompleteTask',
      { task_id: taskId, lease_token: token, result_json: JSON.stringify(result) },
      { retryForMs: 0 },
    );
  }

  /** A URL to PUT the leased task's object `name` to, as the coordinator signs it (the real agent's call). */
  uploadUrl(task: { task_id: string; lease_token: string }, name: string) {
    return this.client.call('CreateUploadUrl', { task_id: task.task_id, lease_token: task.lease_token, name });
  }

  fail(taskId: string, token: string, message: string, retryable: boolean) {
    return this.client.call('FailTask', { task_id: taskId, lease_token: token, message, retryable }, { retryForMs: 0 });
  }

  close(): void {
    this.client.close();
  }
}
