import test from 'ava';
import path from 'node:path';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { FakeAgent, probeResult } from './helpers/fake-agent.js';
import { makeTestVideo, serveFiles, type MediaServer } from './helpers/media.js';
import { LeaseLostError } from '../node-agent/src/coordinator-client.js';
import { enqueueProbe } from '../coordinator/src/probes/probes.js';

let cluster: TestCluster;
let media: MediaServer;
let slowMedia: MediaServer;
let orgId: string;
let key: string;

test.before(async () => {
  cluster = await startCluster('cluster_lease');
  const video = await makeTestVideo(path.join(cluster.dataDir, 'clip.mp4'), { seconds: 3 });
  media = await serveFiles({ 'clip.mp4': video });
  // About 6 s to download: long enough to kill or stale an agent mid-task.
  slowMedia = await serveFiles({ 'clip.mp4': video }, { bytesPerSec: 12_000 });
  ({
    org: { id: orgId },
    key,
  } = await cluster.org());
});

test.after.always(async () => {
  await media?.close();
  await slowMedia?.close();
  await cluster?.close();
});

// A failed test must not leave its agent around to take the next test's task.
test.afterEach.always(() => cluster.killAgents());

const taskState = (id: string) => cluster.app.queue.get(id);
const events = async (id: string) =>
  await cluster.app.db.query<{ kind: string; agent_id: string }>('SELECT kind, agent_id FROM task_events WHERE task_id = $1 ORDER BY id', [
    id,
  ]);

test.serial('a real agent leases a probe, reports progress and completes it', async (t) => {
  const agent = await cluster.startAgent();
  const created = await cluster.api('POST', '/api/probes', { key, body: { url: media.url('clip.mp4') } });
  t.is(created.status, 201);
  const probe = await waitFor(
    async () => {
      const r = await cluster.api('GET', `/api/probes/${created.body.id}`, { key });
      return r.body.state === 'completed' || r.body.state === 'failed' ? r.body : undefined;
    },
    60_000,
    'probe to finish',
  );
  t.is(probe.state, 'completed', JSON.stringify(probe));
  t.is(probe.progress, 1);
  const video = probe.result.streams.find((s: { codecType: string }) => s.codecType === 'video');
  t.deepEqual({ codec: video.codecName, width: video.width, height: video.height }, { codec: 'h264', width: 320, height: 180 });
  t.true(probe.result.streams.some((s: { codecType: string }) => s.codecType === 'audio'));
  t.true(Math.abs(probe.result.durationSec - 3) < 0.2);
  // The agent's log shows the stages it went through.
  await agent.waitForLog(/"task stage".*"downloading"/, 1000);
  await agent.waitForLog(/"task completed"/, 5000);
  t.deepEqual(
    (await events(created.body.id)).map((e) => e.kind),
    ['leased', 'completed'],
  );
  await agent.kill('SIGTERM');
  t.is(agent.proc.exitCode, 0);
});

test.serial('two agents racing for one task: exactly one wins each task', async (t) => {
  const agents = await Promise.all(
    Array.from({ length: 6 }, (_, i) => new FakeAgent(cluster.app.grpcAddress, undefined, `racer-${i}`).register()),
  );
  const ids: string[] = [];
  for (let i = 0; i < 10; i++) ids.push(await enqueueProbe(cluster.app.db.pool, cluster.app.queue, orgId, 'http://example.invalid/x'));
  const won: string[] = [];
  await Promise.all(
    agents.map(async (a) => {
      for (;;) {
        const task = await a.lease(300);
        if (!task) return;
        won.push(task.task_id);
        await a.complete(task.task_id, task.lease_token, probeResult(a.name));
      }
    }),
  );
  t.is(won.length, 10);
  t.deepEqual([...won].sort(), [...ids].sort());
  for (const id of ids)
    t.deepEqual(
      (await events(id)).map((e) => e.kind),
      ['leased', 'completed'],
    );
  agents.forEach((a) => a.close());
});

test.serial('a stale lease token is refused and the lease goes to the next agent', async (t) => {
  const first = await new FakeAgent(cluster.app.grpcAddress, undefined, 'first').register();
  const second = await new FakeAgent(cluster.app.grpcAddress, undefined, 'second').register();
  const id = await enqueueProbe(cluster.app.db.pool, cluster.app.queue, orgId, 'http://example.invalid/y');
  const lease1 = await first.lease();
  t.is(lease1?.task_id, id);
  await first.progress(id, lease1!.lease_token, 0.3);
  // The agent goes silent past its lease.
  await cluster.app.db.query(`UPDATE tasks SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
  t.is(await cluster.app.queue.tick(), 1);
  const lease2 = await second.lease();
  t.is(lease2?.task_id, id);
  t.is(lease2?.attempt, 2);
  await t.throwsAsync(first.progress(id, lease1!.lease_token, 0.5), { instanceOf: LeaseLostError });
  await t.throwsAsync(first.complete(id, lease1!.lease_token, probeResult('stale')), { instanceOf: LeaseLostError });
  await second.complete(id, lease2!.lease_token, probeResult('fresh'));
  t.deepEqual((await taskState(id))?.result, probeResult('fresh'));
  first.close();
  second.close();
});

test.serial('after N lost leases the task fails for good with a clear reason', async (t) => {
  const a = await new FakeAgent(cluster.app.grpcAddress, undefined, 'flaky').register();
  const id = await enqueueProbe(cluster.app.db.pool, cluster.app.queue, orgId, 'http://example.invalid/z');
  for (let i = 0; i < 3; i++) {
    const lease = await a.lease();
    t.is(lease?.task_id, id);
    await cluster.app.db.query(`UPDATE tasks SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
    await cluster.app.queue.tick();
  }
  const task = await taskState(id);
  t.is(task?.state, 'failed');
  t.regex(task?.lastError ?? '', /lost 3 times/);
  t.is(await a.lease(200), undefined);
  a.close();
});

test.serial('an agent killed with SIGKILL mid-task: re-leased, completed once by another agent', async (t) => {
  const doomed = await cluster.startAgent();
  const created = await cluster.api('POST', '/api/probes', { key, body: { url: slowMedia.url('clip.mp4') } });
  const id = created.body.id;
  await doomed.waitForLog(/"task stage".*"downloading"/, 30_000);
  await doomed.kill('SIGKILL');
  const survivor = await cluster.startAgent();
  // The watchdog takes the silent lease back once it expires (lease TTL is 4 s in tests).
  await waitFor(async () => (await cluster.app.queue.tick()) > 0, 20_000, 'lease expiry');
  const done = await waitFor(
    async () => {
      const task = await taskState(id);
      return task?.state === 'completed' || task?.state === 'failed' ? task : undefined;
    },
    90_000,
    'task to finish',
  );
  t.is(done.state, 'completed');
  t.is(done.attempts, 2);
  const kinds = (await events(id)).map((e) => e.kind);
  t.deepEqual(kinds, ['leased', 'lease_expired', 'leased', 'completed']);
  await survivor.waitForLog(new RegExp(`"taskId":"${id}".*"task completed"|"task completed".*"taskId":"${id}"`), 5000);
  await survivor.kill('SIGTERM');
});

test.serial('a real agent whose lease went stale stops its work', async (t) => {
  const agent = await cluster.startAgent();
  const created = await cluster.api('POST', '/api/probes', { key, body: { url: slowMedia.url('clip.mp4') } });
  const id = created.body.id;
  await agent.waitForLog(/"task stage".*"downloading"/, 30_000);
  // Expire the lease (a heartbeat may extend it between the two statements, so until it sticks).
  await waitFor(
    async () => {
      await cluster.app.db.query(`UPDATE tasks SET lease_expires_at = now() - interval '1 second' WHERE id = $1 AND state = 'leased'`, [
        id,
      ]);
      return (await cluster.app.queue.tick()) > 0;
    },
    10_000,
    'lease expiry',
  );
  await agent.waitForLog(/"lease lost; work stopped"/, 20_000);
  t.pass();
  // It then takes the requeued task back and finishes it with a fresh token.
  const done = await waitFor(async () => ((await taskState(id))?.state === 'completed' ? taskState(id) : undefined), 90_000, 'completion');
  t.is(done?.attempts, 2);
  await agent.kill('SIGTERM');
});

test.serial('SIGTERM hands the lease back without counting an attempt', async (t) => {
  const agent = await cluster.startAgent();
  const created = await cluster.api('POST', '/api/probes', { key, body: { url: slowMedia.url('clip.mp4') } });
  const id = created.body.id;
  await agent.waitForLog(/"task stage".*"downloading"/, 30_000);
  await agent.kill('SIGTERM');
  t.is(agent.proc.exitCode, 0);
  const task = await taskState(id);
  t.is(task?.state, 'queued');
  t.is(task?.attempts, 0);
  t.regex(task?.lastError ?? '', /shutting down/);
  t.true((await events(id)).some((e) => e.kind === 'released'));
  const next = await cluster.startAgent();
  await waitFor(async () => ((await taskState(id))?.state === 'completed' ? true : undefined), 90_000, 'completion');
  await next.kill('SIGTERM');
});

test.serial('coordinator restarted mid-task: nothing is lost', async (t) => {
  const agent = await cluster.startAgent();
  const created = await cluster.api('POST', '/api/probes', { key, body: { url: slowMedia.url('clip.mp4') } });
  const id = created.body.id;
  await agent.waitForLog(/"task stage".*"downloading"/, 30_000);
  await cluster.restartCoordinator();
  const done = await waitFor(
    async () => {
      const task = await taskState(id);
      return task?.state === 'completed' || task?.state === 'failed' ? task : undefined;
    },
    90_000,
    'task to finish after restart',
  );
  t.is(done.state, 'completed');
  t.is(done.attempts, 1);
  const r = await cluster.api('GET', `/api/probes/${id}`, { key });
  t.is(r.body.result.streams.length, 2);
  await agent.kill('SIGTERM');
});

test.serial('an idle agent gets a new task at once, also after the wake-up connection dropped', async (t) => {
  const a = await new FakeAgent(cluster.app.grpcAddress, undefined, 'idle').register();
  const timeToLease = async () => {
    const leasing = a.lease(8000);
    await new Promise((r) => setTimeout(r, 100));
    const t0 = Date.now();
    await enqueueProbe(cluster.app.db.pool, cluster.app.queue, orgId, 'http://example.invalid/w');
    const task = await leasing;
    await a.complete(task!.task_id, task!.lease_token, probeResult('idle'));
    return Date.now() - t0;
  };
  t.true((await timeToLease()) < 1000);
  const killed = await cluster.app.db.query(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%'`,
  );
  t.is(killed.length, 1);
  await new Promise((r) => setTimeout(r, 2000));
  t.true((await timeToLease()) < 1000, 'woken by the reconnected listener, not by the long-poll timeout');
  a.close();
});

test.serial('an agent with a wrong cluster token is refused', async (t) => {
  const intruder = new FakeAgent(cluster.app.grpcAddress, 'not-the-cluster-token-at-all', 'intruder');
  const err = await t.throwsAsync<Error & { code?: number }>(intruder.register());
  t.is(err?.code, 16); // UNAUTHENTICATED
  intruder.close();
});
