import client from 'prom-client';

/** The coordinator's Prometheus registry: default process metrics plus the cluster's own. */
export function createMetrics() {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const m = {
    registry,
    agentsConnected: new client.Gauge({ name: 'shorts_agents_connected', help: 'Agents with a live session to this coordinator', registers: [registry] }),
    tasksQueued: new client.Gauge({ name: 'shorts_tasks_queued', help: 'Tasks waiting for an agent, by type', labelNames: ['type'], registers: [registry] }),
    tasksRunning: new client.Gauge({ name: 'shorts_tasks_running', help: 'Tasks leased to an agent, by type', labelNames: ['type'], registers: [registry] }),
    taskProgress: new client.Gauge({ name: 'shorts_task_progress_ratio', help: 'Progress (0-1) of each running task', labelNames: ['type', 'task_id'], registers: [registry] }),
    tasksFinished: new client.Counter({ name: 'shorts_tasks_finished_total', help: 'Tasks finished, by type and outcome', labelNames: ['type', 'outcome'], registers: [registry] }),
    leasesExpired: new client.Counter({ name: 'shorts_leases_expired_total', help: 'Leases taken back from silent agents', labelNames: ['type'], registers: [registry] }),
    leaseWait: new client.Histogram({
      name: 'shorts_task_queue_wait_seconds', help: 'Time from enqueue to lease', labelNames: ['type'], registers: [registry],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 120, 600],
    }),
    taskDuration: new client.Histogram({
      name: 'shorts_task_duration_seconds', help: 'Time from lease to completion', labelNames: ['type'], registers: [registry],
      buckets: [0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1800],
    }),
    jobsCreated: new client.Counter({ name: 'shorts_jobs_created_total', help: 'Jobs accepted', registers: [registry] }),
    jobsFinished: new client.Counter({ name: 'shorts_jobs_finished_total', help: 'Jobs finished, by status', labelNames: ['status'], registers: [registry] }),
    rendersFinished: new client.Counter({ name: 'shorts_renders_finished_total', help: 'Renders finished, by outcome', labelNames: ['outcome'], registers: [registry] }),
    webhookAttempts: new client.Counter({ name: 'shorts_webhook_attempts_total', help: 'Webhook deliveries tried, by outcome', labelNames: ['outcome'], registers: [registry] }),
    httpRequests: new client.Histogram({
      name: 'shorts_http_request_duration_seconds', help: 'API request duration', labelNames: ['method', 'route', 'status'], registers: [registry],
      buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    }),
  };
  return m;
}

export type Metrics = ReturnType<typeof createMetrics>;
