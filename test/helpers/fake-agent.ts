import { CoordinatorClient } from '../../node-agent/src/coordinator-client.js';

/** An in-process agent that speaks the real protocol but runs no work: for races and benches. */
export class FakeAgent {
  readonly client: CoordinatorClient;
  agentId = '';
  constructor(address: string, token = 'test-cluster-token-0123456789', readonly name = 'fake') {
    this.client = new CoordinatorClient(address, token);
  }

  async register(taskTypes = ['probe-media']): Promise<this> {
    const res = await this.client.call('RegisterAgent', {
      name: this.name,
      capabilities: { cpu_cores: 1, task_types: taskTypes, max_concurrent_tasks: 1, onnx_providers: ['EXECUTION_PROVIDER_CPU'] },
    });
    this.agentId = res.agent_id;
    return this;
  }

  async lease(waitMs = 1000): Promise<{ task_id: string; lease_token: string; type: string; payload_json: string; attempt: number } | undefined> {
    const res = await this.client.call('LeaseTask', { agent_id: this.agentId, task_types: [], wait_ms: waitMs }, { deadlineMs: waitMs + 5000 });
    return res.task?.task_id ? res.task : undefined;
  }

  progress(taskId: string, token: string, progress: number, stage = 'working') {
    return this.client.call('ReportProgress', { task_id: taskId, lease_token: token, progress, stage }, { retryForMs: 0 });
  }

  complete(taskId: string, token: string, result: object) {
    return this.client.call('CompleteTask', { task_id: taskId, lease_token: token, result_json: JSON.stringify(result) }, { retryForMs: 0 });
  }

  fail(taskId: string, token: string, message: string, retryable: boolean) {
    return this.client.call('FailTask', { task_id: taskId, lease_token: token, message, retryable }, { retryForMs: 0 });
  }

  close(): void {
    this.client.close();
  }
}
