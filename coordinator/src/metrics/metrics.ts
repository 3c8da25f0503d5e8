import client from 'prom-client';
import { TASK_STATES, TASK_TYPES } from '@shorts/common/tasks';
import { RUN_TIME_BUCKETS, onePerScrape, seriesIn } from '@shorts/common/metrics';
import type { FarmState } from './farm-state.js';

// Prometheus naming: `shorts_` prefix, base units (seconds, bytes, ratios), `_total` for counters.
// Labels are bounded sets only (task type, outcome, route template, agent name): never a task, job
// or organization id, which would make a new series per request.

/** Queue waits run from milliseconds (an idle farm) to an hour (a backlog); renders and analyses take minutes. */
export const QUEUE_WAIT_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600];
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Shares of a short's speech (reframe.quality), in tenths. */
export const RATIO_BUCKETS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1];

/** How a task ended for good. Cancelled is its own outcome: a mass cancel is an operator's or a
 *  client's choice and must not read as a failure rate. */
export const TASK_OUTCOMES = [TASK_STATES.completed, TASK_STATES.failed, TASK_STATES.cancelled] as const;
export type TaskOutcome = (typeof TASK_OUTCOMES)[number];
/** Why a leased task went back to the queue. */
export const REQUEUE_REASONS = ['lease_expired', 'time_limit', 'retry', 'released', 'handed_back'] as const;
export type RequeueReason = (typeof REQUEUE_REASONS)[number];

/** A gauge whose series are absent, not zero, when its value is unknown: prom-client resets an
 *  unlabelled gauge to 0, and a 0 read while Postgres is down would say "no agents online". */
class FarmGauge<L extends string> extends client.Gauge<L> {
  unknown = false;
  override async get(): Promise<client.MetricObjectWithValues<client.MetricValue<L>>> {
    const metric = await super.get();
    return this.unknown ? { ...metric, values: [] } : metric;
  }
}
/**
 * The coordinator's Prometheus registry. Counters and histograms count what this process did (sum
 * them over coordinators); gauges that describe the farm (queue depth, agents, stored bytes) are read
 * from Postgres at scrape time, so every coordinator reports the same truth (take max, not sum).
 * When that read fails (database down) the farm gauges are left out of the scrape and
 * shorts_farm_state_up says 0.
 */
export function createMetrics(readFarmState?: () => Promise<FarmState>, onFarmStateError?: (err: unknown) => void) {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const series = seriesIn(registers);

  // One read of Postgres per scrape. Undefined: no reader, or the read failed.
  const farm: () => Promise<FarmState | undefined> = readFarmState
    ? onePerScrape(readFarmState, onFarmStateError)
    : () => Promise.resolve(undefined);

  const m = {
    registry,
    ...taskMetrics(series),
    ...activityMetrics(series),
    ...farmMetrics(registers, farm, !!readFarmState),
  };

  // Series exist from the start at zero, so rate() and increase() see the first event of each kind.
  for (const type of TASK_TYPES) {
    m.tasksEnqueued.labels(type).inc(0);
    m.fanOuts.labels(type).inc(0);
    m.childTasks.labels(type).inc(0);
    m.tasksLeased.labels(type).inc(0);
    m.reLeases.labels(type).inc(0);
    m.leasesExpired.labels(type).inc(0);
    for (const reason of REQUEUE_REASONS) m.tasksRequeued.labels(type, reason).inc(0);
    for (const outcome of TASK_OUTCOMES) m.tasksFinished.labels(type, outcome).inc(0);
  }
  for (const outcome of ['delivered', 'failed']) m.webhookDeliveries.labels(outcome).inc(0);
  for (const status of ['COMPLETED', 'FAILED']) m.jobsFinished.labels(status).inc(0);
  for (const outcome of ['completed', 'failed']) m.rendersFinished.labels(outcome).inc(0);
  return m;
}

export type Metrics = ReturnType<typeof createMetrics>;

type Series = ReturnType<typeof seriesIn<client.Registry>>;

/** The task queue's counters and histograms: what this process enqueued, leased, requeued and finished. */
function taskMetrics(series: Series) {
  return {
    tasksEnqueued: new client.Counter(series('shorts_tasks_enqueued_total', 'Tasks put in the queue, by type', ['type'])),
    // Fan-out (issue 22): parents split into child tasks (by the parent's type) and the children
    // made (by theirs); tasks_waiting_for_children says how many parents wait on theirs now.
    fanOuts: new client.Counter(
      series('shorts_task_fan_outs_total', "Tasks split into child tasks (fan-out), by the parent's type", ['type']),
    ),
    childTasks: new client.Counter(series('shorts_task_children_total', "Child tasks created by fan-outs, by the child's type", ['type'])),
    tasksLeased: new client.Counter(series('shorts_tasks_leased_total', 'Leases granted to agents, by type', ['type'])),
    reLeases: new client.Counter(
      series(
        'shorts_task_re_leases_total',
        'Leases granted for a task that had been leased before (after a lost lease or a retryable failure), by type',
        ['type'],
      ),
    ),
    tasksFinished: new client.Counter(
      series('shorts_tasks_finished_total', 'Tasks finished for good, by type and outcome (completed, failed, cancelled)', [
        'type',
        'outcome',
      ]),
    ),
    leasesExpired: new client.Counter(
      series('shorts_task_lease_expiries_total', 'Leases taken back from agents that went silent, by type', ['type']),
    ),
    tasksRequeued: new client.Counter(
      series(
        'shorts_task_requeues_total',
        'Leased tasks put back in the queue, by type and why (lease_expired, time_limit, retry, released, handed_back)',
        ['type', 'reason'],
      ),
    ),
    leaseWait: new client.Histogram({
      ...series('shorts_task_queue_wait_seconds', 'Time from enqueue (or requeue) to lease, by type', ['type']),
      buckets: QUEUE_WAIT_BUCKETS,
    }),
    taskDuration: new client.Histogram({
      ...series('shorts_task_run_seconds', 'Time from lease to the task finishing for good, by type and outcome', ['type', 'outcome']),
      buckets: RUN_TIME_BUCKETS,
    }),
  };
}

/** Jobs, analyses, renders, webhooks and HTTP requests this process saw through. */
function activityMetrics(series: Series) {
  return {
    jobsCreated: new client.Counter(series('shorts_jobs_created_total', 'Jobs accepted')),
    jobsFinished: new client.Counter(series('shorts_jobs_finished_total', 'Jobs finished, by status', ['status'])),
    // reframe.quality of each short a completed analysis stores (./jobs/analyze-video-outcome.ts):
    // how often the camera had a speaker on screen to follow, and a face to show.
    speakerOnScreen: new client.Histogram({
      ...series(
        'shorts_reframe_speaker_on_screen_ratio',
        "Per short with a crop path, when its job's analysis completes: the share of its speech time whose speaker detection identified as an on-screen face",
      ),
      buckets: RATIO_BUCKETS,
    }),
    faceInWindow: new client.Histogram({
      ...series(
        'shorts_reframe_face_in_window_ratio',
        "Per short with a crop path, when its job's analysis completes: the share of its speech time with a detected face wholly inside the window shown",
      ),
      buckets: RATIO_BUCKETS,
    }),
    rendersFinished: new client.Counter(series('shorts_renders_finished_total', 'Renders finished, by outcome', ['outcome'])),
    webhookDeliveries: new client.Counter(
      series('shorts_webhook_deliveries_total', 'Webhook delivery attempts, by outcome (delivered, failed)', ['outcome']),
    ),
    httpRequests: new client.Histogram({
      ...series('shorts_http_request_duration_seconds', 'API requests by method, route template and status, with their latency', [
        'method',
        'route',
        'status',
      ]),
      buckets: HTTP_BUCKETS,
    }),
  };
}

/** The farm gauges, read from Postgres at scrape time (absent when `farm` answers undefined). */
function farmMetrics(registers: client.Registry[], farm: () => Promise<FarmState | undefined>, hasReader: boolean) {
  const farmGauge = <L extends string>(name: string, help: string, labelNames: L[], fill: (g: client.Gauge<L>, s: FarmState) => void) =>
    new FarmGauge<L>({
      name,
      help,
      labelNames,
      registers,
      async collect() {
        const s = await farm();
        const gauge = this as FarmGauge<L>;
        gauge.reset();
        gauge.unknown = !s;
        if (s) fill(gauge, s);
      },
    });

  return {
    farmStateUp: hasReader
      ? new client.Gauge({
          name: 'shorts_farm_state_up',
          help: '1 when this coordinator could read the farm state (queue, agents, storage) from Postgres at this scrape, else 0 and those series are absent',
          registers,
          async collect() {
            this.set((await farm()) ? 1 : 0);
          },
        })
      : undefined,
    tasksQueued: farmGauge('shorts_tasks_queued', 'Tasks waiting for an agent, by type', ['type'], (g, s) => {
      for (const t of s.tasks) g.labels(t.type).set(t.queued);
    }),
    tasksRunning: farmGauge('shorts_tasks_leased', 'Tasks leased to an agent now, by type', ['type'], (g, s) => {
      for (const t of s.tasks) g.labels(t.type).set(t.leased);
    }),
    tasksWaitingForChildren: farmGauge(
      'shorts_tasks_waiting_for_children',
      'Tasks whose own part is done and whose child tasks run (fan-out), by type',
      ['type'],
      (g, s) => {
        for (const t of s.tasks) g.labels(t.type).set(t.waiting);
      },
    ),
    oldestQueued: farmGauge(
      'shorts_task_oldest_queued_age_seconds',
      'Age of the oldest task still waiting for an agent, by type (0 when none waits)',
      ['type'],
      (g, s) => {
        for (const t of s.tasks) g.labels(t.type).set(t.oldestQueuedSec);
      },
    ),
    agentsConnected: farmGauge('shorts_agents_connected', 'Agents heard from within their heartbeat window', [], (g, s) => {
      g.set(s.agents.length);
    }),
    agentsByState: farmGauge('shorts_agents', 'Agents by state (online, draining, offline within the last day)', ['state'], (g, s) => {
      for (const a of s.agentStates) g.labels(a.state).set(a.count);
    }),
    agentSlots: farmGauge('shorts_agent_slots', 'Task slots of each connected agent, by state (busy, free)', ['agent', 'state'], (g, s) => {
      for (const a of s.agents) {
        g.labels(a.name, 'busy').set(a.slotsBusy);
        g.labels(a.name, 'free').set(Math.max(0, a.slots - a.slotsBusy));
      }
    }),
    agentInfo: farmGauge(
      'shorts_agent_info',
      'Always 1 for each connected agent; labels say its video encoder, best ONNX execution provider, and where its reframing face detector runs (none: it does not analyse)',
      ['agent', 'encoder', 'onnx_provider', 'face_detector_provider'],
      (g, s) => {
        for (const a of s.agents) g.labels(a.name, a.encoder, a.onnxProvider, a.faceDetectorProvider).set(1);
      },
    ),
    storedBytes: farmGauge('shorts_stored_bytes', 'Bytes of files kept for all organizations (what quotas count)', [], (g, s) => {
      g.set(s.storedBytes);
    }),
    storageVolume: farmGauge(
      'shorts_storage_volume_bytes',
      "Size and free space of the local object store's volume (absent with S3), by state (size, free)",
      ['state'],
      (g, s) => {
        if (!s.volume) return;
        g.labels('size').set(s.volume.sizeBytes);
        g.labels('free').set(s.volume.freeBytes);
      },
    ),
  };
}
