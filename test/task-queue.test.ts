// The lease queue against a real Postgres, with real gRPC agents in-process (FakeAgent speaks the
// real protocol). The domain here is a small recording one, so each test can make a domain hook
// slow, throw, or lose its connection, and see what the queue does with it.
import test from 'ava';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { repoRoot } from '@shorts/common/paths';
import { newId } from '../coordinator/src/ids.js';
import type { TaskType } from '@shorts/common/tasks';
import type { TaskPayload } from '@shorts/common/tasks/contracts';
import type { TaskPlacement } from '@shorts/common/placement';
import { DEFAULT_TASK_TIME_LIMITS_SEC, placementOf } from '@shorts/common/tasks/contracts';
import type { Db } from '../coordinator/src/db/db.js';
import type { Metrics } from '../coordinator/src/metrics/metrics.js';
import { TaskQueue, type TaskRow } from '../coordinator/src/tasks/task-queue.js';
import { listAgents, setDraining } from '../coordinator/src/cluster/agents.js';
import type { FakeAgent } from './helpers/fake-agent.js';
import { startQueueServer, type QueueServer } from './helpers/queue-server.js';
import { LeaseLostError } from '../node-agent/src/coordinator-client.js';
import { waitFor } from './helpers/cluster.js';

const LEASE_TTL_MS = 4000;
const PREFER_GRACE_MS = 2000;

/** Counts lease queries per agent, and lets a test act right after one ran (before it answers). */
class ObservedQueue extends TaskQueue {
  readonly leaseQueries = new Map<string, number>();
  afterLeaseQuery?: (agentId: string, found: TaskRow | undefined) => Promise<void>;
  override async tryLease(agentId: string, types: readonly string[]): Promise<TaskRow | undefined> {
    this.leaseQueries.set(agentId, (this.leaseQueries.get(agentId) ?? 0) + 1);
    const found = await super.tryLease(agentId, types);
    const hook = this.afterLeaseQuery;
    if (hook) await hook(agentId, found);
    return found;
  }
  /** Whether some long-poll is asleep waiting for a NOTIFY. */
  sleeping(): boolean {
    return this.wakeups.eventNames().length > 0;
  }
}

interface Outcome {
  completed?: unknown;
  failed?: { reason: string; code: string };
}

let server: QueueServer<ObservedQueue>;
let db: Db;
let queue: ObservedQueue;
let metrics: Metrics;
let orgA: string;
let orgB: string;
let agents: FakeAgent[];
const outcomes = new Map<string, Outcome>();
const dropped = new Set<string>();

/** The test domain: what each hook does is read from the task's payload. */
function registerTestDomain(q: TaskQueue): void {
  for (const type of ['probe-media', 'analyze-video', 'render-short'] as const) {
    q.registerHandler(type, {
      async prepareLease(task) {
        if (task.payload.slowPrepareMs) await new Promise((r) => setTimeout(r, Number(task.payload.slowPrepareMs)));
        if (task.payload.failPrepare) throw new Error('signing failed');
        return { prepared: true };
      },
      async onComplete(c, task, result) {
        if (task.payload.dropConnectionOnce && !dropped.has(task.id)) {
          dropped.add(task.id);
          // The database drops this transaction's connection mid-way, as a restart or a network cut would.
          const { pid } = (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0];
          await db.pool.query('SELECT pg_terminate_backend($1)', [pid]);
        }
        await c.query('INSERT INTO test_results (task_id, result) VALUES ($1, $2)', [task.id, result]);
        outcomes.set(task.id, { ...outcomes.get(task.id), completed: result });
      },
      async onFailed(_c, task, reason, code) {
        if (task.payload.failOnFailed) throw new Error('domain bug in onFailed');
        outcomes.set(task.id, { ...outcomes.get(task.id), failed: { reason, code } });
      },
    });
  }
}

test.before(async () => {
  server = await startQueueServer('task_queue', {
    queueOptions: {
      leaseTtlMs: LEASE_TTL_MS,
      maxAttempts: 3,
      preferGraceMs: PREFER_GRACE_MS,
      waitingNoticeMs: 200,
      unmetNeedsFailMs: 1500,
    },
    createQueue: (d, options, log, m) => new ObservedQueue(d, options, log, m),
    async prepare(d, q) {
      await d.query('CREATE TABLE test_results (task_id text PRIMARY KEY, result jsonb NOT NULL)');
      registerTestDomain(q);
    },
  });
  ({ db, queue, metrics, agents } = server);
  orgA = await server.organization('Org A');
  orgB = await server.organization('Org B');
});

test.after.always(() => server?.close());

test.beforeEach(async () => {
  queue.afterLeaseQuery = undefined;
  agents.splice(0).forEach((a) => a.close());
  await db.query('DELETE FROM tasks');
  await db.query('DELETE FROM agents');
});

async function agent(
  name: string,
  taskTypes: TaskType[] = ['probe-media'],
  host: Parameters<FakeAgent['register']>[1] = {},
): Promise<FakeAgent> {
  return server.agent(name, taskTypes, host);
}

function enqueue(
  type: TaskType,
  payload: Record<string, unknown> = {},
  opts: { org?: string; placement?: Partial<TaskPlacement>; maxAttempts?: number; subjectId?: string } = {},
): Promise<string> {
  // The test domain's payloads are its own (no contract reads them), not the task types' real ones.
  return queue.enqueue(db.pool, {
    type,
    organizationId: opts.org ?? orgA,
    subjectId: opts.subjectId ?? null,
    payload: payload as TaskPayload<TaskType>,
    placement: opts.placement,
    maxAttempts: opts.maxAttempts,
  });
}

const task = async (id: string) => (await queue.get(id))!;
const eventKinds = async (id: string) =>
  (await db.query<{ kind: string }>('SELECT kind FROM task_events WHERE task_id = $1 ORDER BY id', [id])).map((e) => e.kind);
const expire = (id: string) => db.query(`UPDATE tasks SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
/** The lease began `sec` seconds ago by the database's clock. */
const startedAgo = (id: string, sec: number) =>
  db.query(`UPDATE tasks SET started_at = now() - make_interval(secs => $2) WHERE id = $1`, [id, sec]);
/** shorts_tasks_finished_total for one type and outcome. */
const finishedCount = async (type: TaskType, outcome: string) =>
  (await metrics.tasksFinished.get()).values.find((v) => v.labels.type === type && v.labels.outcome === outcome)?.value ?? 0;

// --- wake-ups ---

test.serial('a NOTIFY that arrives while a waiter runs its lease query still wakes it', async (t) => {
  const a = await agent('waiter');
  let enqueued: string | undefined;
  queue.afterLeaseQuery = async (agentId, found) => {
    if (agentId !== a.agentId || found || enqueued) return;
    // The query found nothing; before the waiter goes to sleep a task is committed and its NOTIFY arrives.
    enqueued = await enqueue('probe-media');
    await new Promise((r) => setTimeout(r, 300));
  };
  const leasing = a.lease(60_000);
  // Either the waiter looks again at once (and takes the task) or it falls asleep over the NOTIFY.
  await waitFor(
    async () => (queue.leaseQueries.get(a.agentId) ?? 0) >= 2 || (enqueued !== undefined && queue.sleeping()),
    10_000,
    'waiter to look again or sleep',
  );
  const lookedAgain = (queue.leaseQueries.get(a.agentId) ?? 0) >= 2;
  if (!lookedAgain) await enqueue('probe-media'); // wakes the sleeper, so a failing run ends quickly
  const leased = await leasing;
  t.true(lookedAgain, 'the waiter looked again at once instead of sleeping over the NOTIFY');
  t.is(leased?.task_id, enqueued);
});

test.serial('a waiting agent wakes only for task types it can take', async (t) => {
  const renderer = await agent('renderer', ['render-short']);
  const prober = await agent('prober', ['probe-media']);
  const renderLease = renderer.lease(20_000);
  const probeLease = prober.lease(20_000);
  await waitFor(
    async () => queue.leaseQueries.get(renderer.agentId) === 1 && queue.leaseQueries.get(prober.agentId) === 1,
    10_000,
    'both waiting',
  );
  const probeId = await enqueue('probe-media');
  t.is((await probeLease)?.task_id, probeId);
  t.is(queue.leaseQueries.get(renderer.agentId), 1, 'the render waiter ran no lease query for a probe');
  const renderId = await enqueue('render-short');
  t.is((await renderLease)?.task_id, renderId);
});

// --- leases the agent never got ---

test.serial('a lease committed while the agent call is cancelled is handed back without costing an attempt', async (t) => {
  const a = await agent('impatient');
  const id = await enqueue('probe-media', { slowPrepareMs: 1500 });
  // The agent gives up (deadline) while the coordinator prepares the leased task's payload.
  const err = await t.throwsAsync<Error & { code?: number }>(a.leaseCall(1000, 500));
  t.is(err?.code, 4); // DEADLINE_EXCEEDED
  const back = await waitFor(async () => ((await task(id)).state === 'queued' ? task(id) : undefined), 10_000, 'hand-back');
  t.is(back.attempts, 0);
  t.true((await eventKinds(id)).includes('handed_back'));
  await db.query(`UPDATE tasks SET payload = '{}' WHERE id = $1`, [id]);
  const next = await a.lease(2000);
  t.is(next?.task_id, id);
  t.is(next?.attempt, 1);
});

test.serial('a lease whose payload cannot be prepared is handed back, and fails for good only after repeated tries', async (t) => {
  const a = await agent('unlucky');
  const id = await enqueue('probe-media', { failPrepare: true });
  const err = await t.throwsAsync<Error & { code?: number }>(a.lease(2000));
  t.is(err?.code, 13); // INTERNAL, without details
  let row = await task(id);
  t.is(row.state, 'queued');
  t.is(row.attempts, 0);
  for (let i = 1; i < 5; i++) await t.throwsAsync(a.lease(2000));
  row = await task(id);
  t.is(row.state, 'failed');
  t.is(outcomes.get(id)?.failed?.code, 'PREPARE_FAILED');
  t.regex(outcomes.get(id)?.failed?.reason ?? '', /could not be handed to an agent/);
});

// --- the watchdog ---

test.serial('one task whose domain hook throws does not stop the watchdog reclaiming the others', async (t) => {
  const a = await agent('lossy', ['probe-media'], { slots: 2 });
  const broken = await enqueue('probe-media', { failOnFailed: true }, { maxAttempts: 1 });
  const first = await a.lease();
  t.is(first?.task_id, broken);
  const healthy = await enqueue('probe-media');
  const second = await a.lease();
  t.is(second?.task_id, healthy);
  await expire(broken);
  await expire(healthy);
  await db.query(`UPDATE tasks SET lease_expires_at = lease_expires_at - interval '1 minute' WHERE id = $1`, [broken]); // first in line
  t.is(await queue.tick(), 1);
  t.is((await task(healthy)).state, 'queued');
  t.is((await task(broken)).state, 'leased', 'its transaction rolled back; the next tick tries again');
});

test.serial('lease expiry follows the database clock, not the coordinator process clock', async (t) => {
  const a = await agent('skewed');
  const id = await enqueue('probe-media');
  // This coordinator's clock runs an hour behind the database's while it leases.
  const RealDate = Date;
  const skew = -3600_000;
  class SkewedDate extends RealDate {
    constructor(...args: Array<string | number | Date>) {
      if (args.length === 0) super(RealDate.now() + skew);
      else super(...(args as [string | number | Date]));
    }
    static override now() {
      return RealDate.now() + skew;
    }
  }
  globalThis.Date = SkewedDate as DateConstructor;
  let leased;
  try {
    leased = await queue.tryLease(a.agentId, ['probe-media']);
  } finally {
    globalThis.Date = RealDate;
  }
  t.is(leased?.id, id);
  const { left } = (await db.one<{ left: number }>(
    `SELECT extract(epoch FROM lease_expires_at - now())::float8 AS left FROM tasks WHERE id = $1`,
    [id],
  ))!;
  t.true(left > 0 && left <= LEASE_TTL_MS / 1000, `lease ends ${left} s from the database's now`);
  t.is(await queue.tick(), 0, 'a fresh lease is not expired');
  t.is((await task(id)).state, 'leased');
});

test.serial(
  'a task its agent keeps heartbeating past its time limit is taken back, and fails for good with TIME_LIMIT on its last attempt',
  async (t) => {
    const a = await agent('hung', ['probe-media'], { slots: 2 });
    const limit = DEFAULT_TASK_TIME_LIMITS_SEC['probe-media'];
    const id = await enqueue('probe-media', {}, { maxAttempts: 2 });
    const lease1 = await a.lease();
    t.is(lease1?.task_id, id);
    // Within the grace the agent may still be stopping it and reporting so.
    await startedAgo(id, limit + 30);
    await a.progress(id, lease1!.lease_token, 0.5);
    t.is(await queue.tick(), 0);
    t.is((await task(id)).state, 'leased');

    // Past the limit and the grace: its heartbeats keep the lease fresh, but the watchdog takes it back.
    await startedAgo(id, limit + 120);
    await a.progress(id, lease1!.lease_token, 0.6);
    t.is(await queue.tick(), 1);
    let row = await task(id);
    t.is(row.state, 'queued');
    t.is(row.attempts, 1);
    t.is(row.lastError, `agent ${a.agentId} kept the task past its time limit of 10 min without stopping it; taken back`);
    t.true((await eventKinds(id)).includes('time_limit'));
    await t.throwsAsync(
      a.progress(id, lease1!.lease_token, 0.7),
      { instanceOf: LeaseLostError },
      'the agent learns its lease is gone, and stops',
    );

    const lease2 = await a.lease();
    t.is(lease2?.attempt, 2);
    await startedAgo(id, limit + 120);
    t.is(await queue.tick(), 1);
    row = await task(id);
    t.is(row.state, 'failed');
    t.deepEqual(outcomes.get(id)?.failed, {
      code: 'TIME_LIMIT',
      reason: 'The probe-media task ran past its time limit of 10 min and its agent did not stop it (2 attempts); giving up',
    });
  },
);

test.serial('the time limit is read by the database clock, not the coordinator process clock', async (t) => {
  const a = await agent('fresh');
  const id = await enqueue('probe-media', {}, { maxAttempts: 1 });
  t.truthy(await a.lease());
  // This coordinator's clock runs a day ahead of the database's: the lease is still young.
  const RealDate = Date;
  class AheadDate extends RealDate {
    constructor(...args: Array<string | number | Date>) {
      if (args.length === 0) super(RealDate.now() + 86_400_000);
      else super(...(args as [string | number | Date]));
    }
    static override now() {
      return RealDate.now() + 86_400_000;
    }
  }
  globalThis.Date = AheadDate as DateConstructor;
  let taken;
  try {
    taken = await queue.tick();
  } finally {
    globalThis.Date = RealDate;
  }
  t.is(taken, 0);
  t.is((await task(id)).state, 'leased');
});

// --- completion ---

test.serial('a dropped database connection while storing a result is retried, not a failed task', async (t) => {
  const a = await agent('finisher');
  const id = await enqueue('probe-media', { dropConnectionOnce: true });
  const lease = await a.lease();
  await a.complete(id, lease!.lease_token, { frames: 42 });
  t.true(dropped.has(id), 'the first try lost its connection');
  const row = await task(id);
  t.is(row.state, 'completed');
  t.deepEqual(row.result, { frames: 42 });
  t.deepEqual(
    (await db.query<{ result: unknown }>('SELECT result FROM test_results WHERE task_id = $1', [id])).map((r) => r.result),
    [{ frames: 42 }],
  );
  t.is(outcomes.get(id)?.failed, undefined);
});

// --- cancelling ---

test.serial('cancelling a queued task reaches its domain as CANCELLED', async (t) => {
  const id = await enqueue('render-short');
  t.is(await queue.cancel(id), 'cancelled');
  t.is((await task(id)).state, 'cancelled');
  t.deepEqual(outcomes.get(id)?.failed, { reason: 'Cancelled', code: 'CANCELLED' });
  t.is(await queue.cancel(id), 'already_finished');
});

test.serial('a cancelled running task is never leased again: its agent is told, and a retry or lost lease ends it', async (t) => {
  const a = await agent('runner', ['probe-media'], { slots: 2 });
  const viaRetry = await enqueue('probe-media');
  const lease1 = await a.lease();
  t.is(await queue.cancel(viaRetry), 'cancel_requested');
  t.true((await a.progress(viaRetry, lease1!.lease_token, 0.5)).cancel_requested);
  // The agent reports a retryable failure instead of the cancel: the task still ends cancelled.
  t.false((await a.fail(viaRetry, lease1!.lease_token, 'killed', true)).will_retry);
  t.is((await task(viaRetry)).state, 'cancelled');
  t.is((await task(viaRetry)).cancelRequested, true);
  t.is(outcomes.get(viaRetry)?.failed?.code, 'CANCELLED');

  const viaExpiry = await enqueue('probe-media');
  const lease2 = await a.lease();
  t.is(lease2?.task_id, viaExpiry);
  await queue.cancel(viaExpiry);
  await expire(viaExpiry);
  t.is(await queue.tick(), 1);
  t.is((await task(viaExpiry)).state, 'cancelled');
  t.is(await a.lease(300), undefined);
});

test.serial('a task handed back by its agent goes back without the cancel flag of an earlier run', async (t) => {
  const a = await agent('handback');
  const id = await enqueue('probe-media');
  const lease = await a.lease();
  await a.client.call('ReleaseTask', { task_id: id, lease_token: lease!.lease_token, reason: 'shutting down' }, { retryForMs: 0 });
  const row = await task(id);
  t.is(row.state, 'queued');
  t.false(row.cancelRequested);
  t.is(row.attempts, 0);
});

test.serial('cancelled tasks count as cancelled in metrics, never as failed', async (t) => {
  const a = await agent('cancels', ['render-short'], { slots: 3 });
  const before = { failed: await finishedCount('render-short', 'failed'), cancelled: await finishedCount('render-short', 'cancelled') };
  // Queued when cancelled.
  await queue.cancel(await enqueue('render-short'));
  // Running: the agent stops and says so.
  const stopped = await enqueue('render-short');
  const l1 = await a.lease();
  await queue.cancel(stopped);
  await a.client.call(
    'FailTask',
    { task_id: stopped, lease_token: l1!.lease_token, message: 'Cancelled', retryable: false, code: 'CANCELLED' },
    { retryForMs: 0 },
  );
  // Running: the agent goes silent instead.
  const silent = await enqueue('render-short');
  const l2 = await a.lease();
  t.is(l2?.task_id, silent);
  await queue.cancel(silent);
  await expire(silent);
  await queue.tick();
  // Running: the agent hands it back.
  const released = await enqueue('render-short');
  const l3 = await a.lease();
  await queue.cancel(released);
  await a.client.call('ReleaseTask', { task_id: released, lease_token: l3!.lease_token, reason: 'shutting down' }, { retryForMs: 0 });
  for (const id of [stopped, silent, released]) t.is((await task(id)).state, 'cancelled');
  t.is((await finishedCount('render-short', 'cancelled')) - before.cancelled, 4);
  t.is((await finishedCount('render-short', 'failed')) - before.failed, 0);
  // A real failure still counts as failed.
  const broken = await enqueue('render-short');
  const l4 = await a.lease();
  await a.fail(broken, l4!.lease_token, 'bad input', false);
  t.is((await finishedCount('render-short', 'failed')) - before.failed, 1);
});

// --- placement by capability ---

test.serial('on a mixed farm renders go to the NVENC host and analysis to the CUDA host', async (t) => {
  const nvencHost = await agent('nvenc-host', ['analyze-video', 'render-short'], { nvenc: true });
  const cudaHost = await agent('cuda-host', ['analyze-video', 'render-short'], { cuda: true });
  const analysis = await enqueue('analyze-video');
  const render = await enqueue('render-short');
  // The NVENC host asks first: the older analysis task prefers CUDA, whose host has a free slot.
  const first = await nvencHost.lease(2000);
  t.is(first?.task_id, render);
  const second = await cudaHost.lease(2000);
  t.is(second?.task_id, analysis);
});

test.serial('a render waits for a free NVENC slot only while one exists, then goes to a CPU host', async (t) => {
  const gpu = await agent('gpu', ['render-short'], { nvenc: true });
  const cpu = await agent('cpu', ['render-short']);
  const r1 = await enqueue('render-short');
  t.is(await cpu.lease(200), undefined, 'the NVENC host has a free slot: the CPU host is passed over');
  t.is((await gpu.lease())?.task_id, r1);
  const r2 = await enqueue('render-short');
  t.is((await cpu.lease(200))?.task_id, r2, 'the NVENC host is full: the CPU host takes the next render at once');
});

test.serial('a preferred host that does not come for the work loses it to another after a short grace', async (t) => {
  await agent('stuck-gpu', ['render-short'], { nvenc: true }); // online with a free slot, but never asks
  const cpu = await agent('cpu', ['render-short']);
  const leasing = cpu.lease(10_000); // the server's longest poll
  await waitFor(async () => (queue.leaseQueries.get(cpu.agentId) ?? 0) >= 1, 5000, 'cpu waiting');
  const id = await enqueue('render-short');
  // No NOTIFY marks the end of the grace: the waiter wakes itself for it, well before its poll ends.
  await waitFor(
    async () => (await task(id)).state === 'leased',
    PREFER_GRACE_MS + 4000,
    'the CPU host to take the render once the grace is over',
  );
  t.is((await leasing)?.task_id, id);
});

test.serial('a task that requires a capability only goes to an agent that has it', async (t) => {
  const plain = await agent('plain', ['analyze-video']);
  const withModel = await agent('whisper', ['analyze-video'], { models: ['whisper-base.en'] });
  const id = await enqueue('analyze-video', {}, { placement: { requires: ['model:whisper-base.en'] } });
  t.is(await plain.lease(300), undefined);
  t.is((await withModel.lease())?.task_id, id);
});

test.serial('analysis goes to the host whose face detector runs on CUDA, not to one where only some CUDA provider loaded', async (t) => {
  const cudaOnly = await agent('cuda-cpu-detector', ['analyze-video'], { cuda: true, detectorOnCuda: false });
  const detectorOnCuda = await agent('cuda-detector', ['analyze-video'], { cuda: true });
  const id = await enqueue('analyze-video');
  t.is(await cudaOnly.lease(300), undefined, 'passed over while the host detecting faces on CUDA has a free slot');
  t.is((await detectorOnCuda.lease())?.task_id, id);
});

test.serial(
  'analysis requires a transcriber, a face detector and the VAD model: an agent without them never gets it, and it fails clearly',
  async (t) => {
    t.deepEqual(placementOf('analyze-video').requires, ['face-detector', 'model:silero-vad', 'transcriber']);
    const bare = await agent('no-analysis-tools', ['analyze-video'], { analysis: false });
    const id = await enqueue('analyze-video');
    t.is(await bare.lease(300), undefined);
    await db.query(`UPDATE tasks SET queued_at = now() - interval '1 minute' WHERE id = $1`, [id]);
    await queue.tick();
    t.is((await task(id)).state, 'failed');
    t.is(outcomes.get(id)?.failed?.code, 'NO_CAPABLE_AGENT');
    t.regex(
      outcomes.get(id)?.failed?.reason ?? '',
      /^No connected agent has a face detector and the model silero-vad and a speech recogniser; gave up after waiting \d+ s$/,
    );
  },
);

test.serial('agents registered before analysis required its tags get them on upgrade, and take analysis', async (t) => {
  const a = await agent('registered-long-ago', ['analyze-video'], { cuda: true });
  // What an older coordinator stored: the same capabilities, without the tags derived from them.
  await db.query(
    `UPDATE agents SET capability_tags = ARRAY['encoder:libx264', 'model:silero-vad', 'onnx:cpu', 'onnx:cuda', 'transcriber:pocketsphinx'] WHERE id = $1`,
    [a.agentId],
  );
  const id = await enqueue('analyze-video');
  t.is(await a.lease(300), undefined, 'before the migration it cannot take analysis');
  await db.query(await readFile(path.join(repoRoot(), 'coordinator/src/db/migrations/010_analysis_capability_tags.sql'), 'utf8'));
  const { tags } = (await db.one<{ tags: string[] }>(`SELECT capability_tags AS tags FROM agents WHERE id = $1`, [a.agentId]))!;
  t.deepEqual(tags, [
    'encoder:libx264',
    'face-detector',
    'face-detector:cuda',
    'model:silero-vad',
    'onnx:cpu',
    'onnx:cuda',
    'transcriber',
    'transcriber:pocketsphinx',
  ]);
  t.is((await a.lease())?.task_id, id);
});

test.serial('nothing waits for a capability no agent has: it says so, then fails clearly', async (t) => {
  await agent('plain', ['analyze-video']);
  const id = await enqueue('analyze-video', {}, { placement: { requires: ['model:whisper-large'] } });
  await db.query(`UPDATE tasks SET queued_at = now() - interval '1 second' WHERE id = $1`, [id]);
  await queue.tick();
  t.is((await task(id)).waitingReason, 'waiting for an analysis agent with the model whisper-large');
  await db.query(`UPDATE tasks SET queued_at = now() - interval '1 minute' WHERE id = $1`, [id]);
  await queue.tick();
  t.is((await task(id)).state, 'failed');
  t.is(outcomes.get(id)?.failed?.code, 'NO_CAPABLE_AGENT');
  t.regex(outcomes.get(id)?.failed?.reason ?? '', /No connected agent has the model whisper-large/);
});

test.serial('work for a type no agent serves waits visibly instead of failing (an agent may be restarting)', async (t) => {
  await agent('prober', ['probe-media']);
  const renderId = newId();
  const id = await enqueue('render-short', {}, { subjectId: renderId });
  await db.query(`UPDATE tasks SET queued_at = now() - interval '10 minutes' WHERE id = $1`, [id]);
  await queue.tick();
  const row = await task(id);
  t.is(row.state, 'queued');
  t.is(row.waitingReason, 'waiting for a render agent');
  t.is(await queue.waitingReason(renderId), 'waiting for a render agent', 'what the render status answer shows');
  const renderer = await agent('renderer', ['render-short']);
  t.is((await renderer.lease())?.task_id, id);
  t.is((await task(id)).waitingReason, null, 'cleared once leased');
});

// --- fairness ---

test.serial("one organization's backlog does not starve another's single task", async (t) => {
  const a = await agent('only-one', ['render-short']);
  const backlog: string[] = [];
  const subjects = new Map<string, string>();
  const add = async (org: string) => {
    const subjectId = newId();
    const id = await enqueue('render-short', {}, { org, subjectId });
    subjects.set(id, subjectId);
    return id;
  };
  for (let i = 0; i < 6; i++) backlog.push(await add(orgA));
  const single = await add(orgB);
  // What a render's status answers as its place in line, before any of them starts.
  const predicted = new Map<string, number | undefined>();
  for (const [id, subjectId] of subjects) predicted.set(id, await queue.tasksAhead(subjectId, 'render-short'));
  const order: string[] = [];
  for (let i = 0; i < 7; i++) {
    const lease = await a.lease();
    order.push(lease!.task_id);
    await a.complete(lease!.task_id, lease!.lease_token, {});
  }
  t.is(order.indexOf(single), 1, 'the other organization goes next, not after the backlog');
  t.deepEqual(
    order.filter((id) => id !== single),
    backlog,
    'each organization keeps its own order',
  );
  t.deepEqual(
    order.map((id) => predicted.get(id)),
    [0, 1, 2, 3, 4, 5, 6],
    'the queue position told beforehand is the real one',
  );
});

test.serial('an organization with fewer running tasks goes first', async (t) => {
  const a = await agent('wide', ['render-short'], { slots: 4 });
  const thirdOfA = newId();
  for (let i = 0; i < 3; i++) await enqueue('render-short', {}, { org: orgA, subjectId: i === 2 ? thirdOfA : undefined });
  const first = await a.lease();
  const second = await a.lease();
  const onlyOfB = newId();
  const b = await enqueue('render-short', {}, { org: orgB, subjectId: onlyOfB });
  t.not(first, undefined);
  t.not(second, undefined);
  t.is(await queue.tasksAhead(onlyOfB, 'render-short'), 0);
  t.is(await queue.tasksAhead(thirdOfA, 'render-short'), 1);
  t.is((await a.lease())?.task_id, b);
});

// --- agents: drain, heartbeat, offline ---

test.serial('a drained agent finishes its work, leases nothing new, and learns so on its next call', async (t) => {
  const a = await agent('drainee', ['probe-media'], { slots: 2 });
  const running = await enqueue('probe-media');
  const lease = await a.lease();
  await setDraining(db, a.agentId, true);
  t.true((await a.heartbeat(1)).draining);
  const waiting = await enqueue('probe-media');
  const answer = await a.leaseCall(500);
  t.true(answer.draining);
  t.is(answer.task, undefined);
  await a.complete(running, lease!.lease_token, { done: true });
  t.is((await task(running)).state, 'completed', 'it may still finish what it had');
  t.is((await task(waiting)).state, 'queued');
  await setDraining(db, a.agentId, false);
  t.false((await a.heartbeat()).draining);
  t.is((await a.lease())?.task_id, waiting);
});

test.serial('heartbeats are stored, and a silent agent is marked offline until it speaks again', async (t) => {
  const a = await agent('beating');
  await a.heartbeat(1, 123_456_789);
  let row = await db.one<{ state: string; running?: number; free?: number }>(
    `SELECT state, running_tasks AS "running", free_disk_bytes AS "free" FROM agents WHERE id = $1`,
    [a.agentId],
  );
  t.deepEqual(row, { state: 'online', running: 1, free: 123_456_789 });
  // The agent list shows what the agent says it runs next to what it was leased.
  t.like(
    (await listAgents(db)).find((v) => v.id === a.agentId),
    { runningTasks: 0, reportedRunningTasks: 1 },
  );
  await db.query(`UPDATE agents SET last_seen_at = now() - interval '1 minute' WHERE id = $1`, [a.agentId]);
  await queue.tick();
  row = await db.one<{ state: string }>(`SELECT state FROM agents WHERE id = $1`, [a.agentId]);
  t.is(row!.state, 'offline');
  await a.heartbeat();
  row = await db.one<{ state: string }>(`SELECT state FROM agents WHERE id = $1`, [a.agentId]);
  t.is(row!.state, 'online');
});
