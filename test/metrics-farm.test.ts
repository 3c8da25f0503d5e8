import test from 'ava';
import { createLogger } from '@shorts/common/logger';
import type { Coordinator } from '../coordinator/src/context.js';
import { enqueueProbe } from '../coordinator/src/probes/probes.js';
import { Db } from '../coordinator/src/db/db.js';
import { readFarmState } from '../coordinator/src/metrics/farm-state.js';
import { createMetrics } from '../coordinator/src/metrics/metrics.js';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { FakeAgent, probeResult } from './helpers/fake-agent.js';

// Farm gauges come from Postgres at scrape time, so a second coordinator that enqueued nothing and
// leased nothing reports the same queue and agents as the first; counters are per process.

let cluster: TestCluster;
let other: Coordinator;

test.before(async () => {
  cluster = await startCluster('metrics_farm');
  other = await cluster.startCoordinator({ log: createLogger({ service: 'coordinator-b' }, 'error') });
});
test.after.always(async () => {
  await other?.close();
  await cluster?.close();
});

async function scrape(app: Coordinator): Promise<string> {
  const res = await fetch(`${app.httpUrl}/metrics`);
  return res.text();
}

/** The value of one series, labels given in any order; undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v) && Object.keys(got).length === Object.keys(labels).length)
      return Number(m[3]);
  }
  return undefined;
}

test.serial('queue depth, agents, slots and encoders read the same from a coordinator that did none of it', async (t) => {
  const { org } = await cluster.org();
  const before = await scrape(other);
  t.is(sample(before, 'shorts_tasks_queued', { type: 'probe-media' }), 0);
  t.is(sample(before, 'shorts_agents_connected'), 0);

  for (let i = 0; i < 3; i++) await enqueueProbe(cluster.app.db.pool, cluster.app.queue, org.id, `http://example.invalid/${i}`);
  const gpu = await new FakeAgent(cluster.app.grpcAddress, undefined, 'gpu-host').register(['probe-media'], {
    nvenc: true,
    cuda: true,
    slots: 4,
  });
  const cpu = await new FakeAgent(cluster.app.grpcAddress, undefined, 'cpu-host').register(['probe-media'], { slots: 2 });
  const leased = await gpu.lease(1000);
  t.truthy(leased);

  for (const app of [cluster.app, other]) {
    const text = await scrape(app);
    t.is(sample(text, 'shorts_tasks_queued', { type: 'probe-media' }), 2);
    t.is(sample(text, 'shorts_tasks_leased', { type: 'probe-media' }), 1);
    t.true(sample(text, 'shorts_task_oldest_queued_age_seconds', { type: 'probe-media' })! >= 0);
    t.is(sample(text, 'shorts_agents_connected'), 2);
    t.is(sample(text, 'shorts_agent_slots', { agent: 'gpu-host', state: 'busy' }), 1);
    t.is(sample(text, 'shorts_agent_slots', { agent: 'gpu-host', state: 'free' }), 3);
    t.is(sample(text, 'shorts_agent_slots', { agent: 'cpu-host', state: 'free' }), 2);
    t.is(
      sample(text, 'shorts_agent_info', { agent: 'gpu-host', encoder: 'nvenc', onnx_provider: 'cuda', face_detector_provider: 'none' }),
      1,
    );
    t.is(
      sample(text, 'shorts_agent_info', { agent: 'cpu-host', encoder: 'x264', onnx_provider: 'cpu', face_detector_provider: 'none' }),
      1,
    );
  }
  // Counters say what each process did: the lease went through the first coordinator only.
  t.is(sample(await scrape(cluster.app), 'shorts_tasks_leased_total', { type: 'probe-media' }), 1);
  t.is(sample(await scrape(other), 'shorts_tasks_leased_total', { type: 'probe-media' }), 0);
  await gpu.complete(leased!.task_id, leased!.lease_token, probeResult('bench'));
  gpu.close();
  cpu.close();
});

test.serial('a lease lost to silence counts one expiry, and taking the task again counts one re-lease', async (t) => {
  const { org } = await cluster.org();
  // Drain what the first test left so this task is the one leased.
  const drainer = await new FakeAgent(cluster.app.grpcAddress, undefined, 'drainer').register();
  for (let task = await drainer.lease(200); task; task = await drainer.lease(200))
    await drainer.complete(task.task_id, task.lease_token, probeResult('bench'));
  drainer.close();
  const before = await scrape(cluster.app);
  await enqueueProbe(cluster.app.db.pool, cluster.app.queue, org.id, 'http://example.invalid/lost');
  const silent = await new FakeAgent(cluster.app.grpcAddress, undefined, 'silent').register();
  t.truthy(await silent.lease(1000));
  await waitFor(async () => (await cluster.app.queue.tick()) > 0, 20_000, 'lease expiry');
  const rescuer = await new FakeAgent(cluster.app.grpcAddress, undefined, 'rescuer').register();
  const again = await rescuer.lease(2000);
  t.truthy(again);
  await rescuer.complete(again!.task_id, again!.lease_token, probeResult('bench'));
  const after = await scrape(cluster.app);
  const delta = (name: string, labels: Record<string, string>) => sample(after, name, labels)! - sample(before, name, labels)!;
  t.is(delta('shorts_task_lease_expiries_total', { type: 'probe-media' }), 1);
  t.is(delta('shorts_task_re_leases_total', { type: 'probe-media' }), 1);
  t.is(delta('shorts_tasks_leased_total', { type: 'probe-media' }), 2);
  t.is(delta('shorts_tasks_finished_total', { type: 'probe-media', outcome: 'completed' }), 1);
  t.is(delta('shorts_task_run_seconds_count', { type: 'probe-media', outcome: 'completed' }), 1);
  silent.close();
  rescuer.close();
});

test.serial(
  'HTTP requests are labelled by route template and status, never by the ids in the path; no label names a task, job or organization',
  async (t) => {
    const { key } = await cluster.org();
    const missing = '01a2b3c4-0000-7000-8000-000000000000';
    t.is((await cluster.api('GET', `/api/jobs/${missing}`, { key })).status, 404);
    t.is((await cluster.api('GET', '/api/jobs', { key })).status, 200);
    t.is((await cluster.api('GET', '/no/such/route')).status, 404);
    const text = await scrape(cluster.app);
    t.true(sample(text, 'shorts_http_request_duration_seconds_count', { method: 'GET', route: '/api/jobs/:jobId', status: '404' })! >= 1);
    t.true(sample(text, 'shorts_http_request_duration_seconds_count', { method: 'GET', route: '/api/jobs', status: '200' })! >= 1);
    t.true(sample(text, 'shorts_http_request_duration_seconds_count', { method: 'GET', route: 'unmatched', status: '404' })! >= 1);
    t.false(text.includes(missing));
    t.notRegex(text, /\b(task_id|job_id|organization_id|org_id|user_id)="/);
    // Stored bytes and, with local storage, the volume the objects live on.
    t.true(sample(text, 'shorts_stored_bytes')! >= 0);
    const size = sample(text, 'shorts_storage_volume_bytes', { state: 'size' })!;
    const free = sample(text, 'shorts_storage_volume_bytes', { state: 'free' })!;
    t.true(size > 0 && free >= 0 && free <= size);
  },
);

test.serial('while the database cannot be read the farm series are absent, not zero, and shorts_farm_state_up says 0', async (t) => {
  // Nothing listens on port 1: every read is refused, as when Postgres is down.
  const down = new Db('postgres://shorts@127.0.0.1:1/shorts');
  const agent = await new FakeAgent(cluster.app.grpcAddress, undefined, 'steady').register();
  let db = cluster.app.db;
  const errors: unknown[] = [];
  const metrics = createMetrics(
    () => readFarmState(db, { agentSilenceMs: 4000 }),
    (err) => errors.push(err),
  );
  try {
    let text = await metrics.registry.metrics();
    t.is(sample(text, 'shorts_farm_state_up'), 1);
    t.true(sample(text, 'shorts_agents_connected')! >= 1);

    db = down;
    text = await metrics.registry.metrics();
    t.is(sample(text, 'shorts_farm_state_up'), 0);
    // A 0 here would fire ShortsNoAgentsOnline although the agent is fine.
    t.is(sample(text, 'shorts_agents_connected'), undefined);
    t.is(sample(text, 'shorts_stored_bytes'), undefined);
    t.is(sample(text, 'shorts_tasks_queued', { type: 'probe-media' }), undefined);
    t.is(sample(text, 'shorts_agents', { state: 'online' }), undefined);
    t.regex(text, /^# TYPE shorts_agents_connected gauge$/m, 'still declared, for dashboards and rule checks');
    t.is(errors.length, 1, 'the failed read is reported once per scrape');
    // The counters this process keeps do not depend on the database.
    t.is(sample(text, 'shorts_tasks_leased_total', { type: 'probe-media' }), 0);

    db = cluster.app.db;
    text = await metrics.registry.metrics();
    t.is(sample(text, 'shorts_farm_state_up'), 1);
    t.true(sample(text, 'shorts_agents_connected')! >= 1, 'back once the database answers');
  } finally {
    agent.close();
    await down.close();
  }
});
