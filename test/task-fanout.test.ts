// Fan-out and fan-in in the lease queue, against a real Postgres with in-process agents that speak
// the real gRPC protocol (FakeAgent). The domain is a small recording one on render-short (whose
// contract declares render-chunk children): a parent's payload says how many parts it splits into.
import test from 'ava';
import { createLogger } from '@shorts/common/logger';
import { ContractViolation, type TaskPayload } from '@shorts/common/tasks/contracts';
import type { TaskPlacement } from '@shorts/common/placement';
import type { Db, Queryable } from '../coordinator/src/db/db.js';
import { createMetrics } from '../coordinator/src/metrics/metrics.js';
import { TaskQueue, type TaskRow } from '../coordinator/src/tasks/task-queue.js';
import { withContract } from '../coordinator/src/tasks/typed-outcome.js';
import type { FakeAgent, LeasedTask } from './helpers/fake-agent.js';
import { startQueueServer, type QueueServer } from './helpers/queue-server.js';
import { renderShortPayload } from './helpers/render-payload.js';
import { LeaseLostError } from '../node-agent/src/coordinator-client.js';

const LEASE_TTL_MS = 4000;

let server: QueueServer<TaskQueue>;
let db: Db;
let queue: TaskQueue;
let orgA: string;
let orgB: string;
let agents: FakeAgent[];
/** What the domain heard, per parent id. */
const heard = {
  fanIns: [] as string[],
  completed: [] as string[],
  failed: [] as Array<{ id: string; reason: string; code: string }>,
  after: [] as Array<{ id: string; outcome: string }>,
};

test.before(async () => {
  server = await startQueueServer('task_fanout', {
    queueOptions: { leaseTtlMs: LEASE_TTL_MS, maxAttempts: 3, preferGraceMs: 60_000, waitingNoticeMs: 60_000, unmetNeedsFailMs: 120_000 },
    async prepare(d, q) {
      await d.query('CREATE TABLE test_results (task_id text PRIMARY KEY, result jsonb NOT NULL)');
      q.registerHandler('render-short', {
        async fanOut(_c, parent) {
          const parts = Number(parent.payload.parts ?? 0);
          return Array.from({ length: parts }, (_, part) => ({
            type: 'render-chunk' as const,
            payload: { part },
            placement: parent.payload.childPlacement as Partial<TaskPlacement> | undefined,
          }));
        },
        async fanIn(_c, parent, result, children) {
          heard.fanIns.push(parent.id);
          return { own: result, parts: children.results };
        },
        async onComplete(c, task, result) {
          // The primary key makes a second completion of the same task fail loudly.
          await c.query('INSERT INTO test_results (task_id, result) VALUES ($1, $2)', [task.id, result]);
          heard.completed.push(task.id);
        },
        async onFailed(_c, task, reason, code) {
          heard.failed.push({ id: task.id, reason, code });
        },
        async afterFinish(task, outcome) {
          heard.after.push({ id: task.id, outcome });
        },
      });
      q.registerHandler('probe-media', { async onComplete() {}, async onFailed() {} });
      q.registerHandler('render-chunk', { async onComplete() {}, async onFailed() {} });
    },
  });
  ({ db, queue, agents } = server);
  orgA = await server.organization('Org A');
  orgB = await server.organization('Org B');
});

test.after.always(() => server?.close());

test.beforeEach(async () => {
  agents.splice(0).forEach((a) => a.close());
  await db.query('DELETE FROM tasks');
  await db.query('DELETE FROM agents');
  await db.query('DELETE FROM test_results');
  heard.fanIns = [];
  heard.completed = [];
  heard.failed = [];
  heard.after = [];
});

async function agent(name: string, host: Parameters<FakeAgent['register']>[1] = {}): Promise<FakeAgent> {
  return server.agent(name, ['render-short', 'render-chunk'], host);
}

function enqueueParent(payload: Record<string, unknown>, org = orgA): Promise<string> {
  // The test domain's payloads are its own (its handler reads them), not render-short's real ones.
  return queue.enqueue(db.pool, {
    type: 'render-short',
    organizationId: org,
    subjectId: null,
    payload: payload as TaskPayload<'render-short'>,
  });
}

/** The parent is leased and its own part done: it splits into its children. */
async function splitParent(parts: number, extra: Record<string, unknown> = {}, org = orgA): Promise<string> {
  const id = await enqueueParent({ parts, ...extra }, org);
  const a = await agent(`parent-runner-${id}`);
  const leased = await a.lease();
  if (leased?.task_id !== id) throw new Error('the parent was not leased');
  await a.complete(leased.task_id, leased.lease_token, { own: 'probe' });
  return id;
}

const state = async (id: string) => (await queue.get(id))!.state;
const children = (parentId: string) =>
  db.query<{ id: string; state: string; cancelRequested: boolean; organizationId: string; requires: string[] }>(
    `SELECT id, state, cancel_requested AS "cancelRequested", organization_id AS "organizationId", requires FROM tasks WHERE parent_id = $1 ORDER BY child_index`,
    [parentId],
  );
const stored = (id: string) => db.query<{ result: { parts?: unknown } }>('SELECT result FROM test_results WHERE task_id = $1', [id]);
const partOf = (leased: LeasedTask) => JSON.parse(leased.payload_json).part as number;

test.serial('a parent completes once, after the last of its children, even when they all complete at the same moment', async (t) => {
  for (let round = 0; round < 3; round++) {
    const parentId = await splitParent(4);
    t.is(await state(parentId), 'waiting');
    const kids = await children(parentId);
    t.is(kids.length, 4);
    t.true(kids.every((k) => k.state === 'queued' && k.organizationId === orgA));
    const workers = await Promise.all([0, 1, 2, 3].map((i) => agent(`worker-${round}-${i}`)));
    const leases = await Promise.all(workers.map((w) => w.lease()));
    t.true(
      leases.every((l) => l !== undefined),
      'each child went to its own agent',
    );
    t.is((await stored(parentId)).length, 0, 'nothing is stored while children run');
    await Promise.all(leases.map((l, i) => workers[i]!.complete(l!.task_id, l!.lease_token, { part: partOf(l!) })));
    t.is(await state(parentId), 'completed');
    const rows = await stored(parentId);
    t.is(rows.length, 1);
    t.deepEqual(
      rows[0]!.result,
      { own: { own: 'probe' }, parts: [{ part: 0 }, { part: 1 }, { part: 2 }, { part: 3 }] },
      'results joined in child order',
    );
    t.deepEqual(
      heard.fanIns.filter((id) => id === parentId),
      [parentId],
    );
    t.deepEqual(
      heard.completed.filter((id) => id === parentId),
      [parentId],
    );
    await new Promise((r) => setTimeout(r, 50));
    t.deepEqual(
      heard.after.filter((a) => a.id === parentId),
      [{ id: parentId, outcome: 'completed' }],
    );
  }
  t.deepEqual(heard.completed.length, 3, 'children never reach the domain themselves');
});

test.serial('a child that fails for good fails the parent with its reason, and its siblings are told to stop', async (t) => {
  const parentId = await splitParent(3);
  const workers = await Promise.all([0, 1, 2].map((i) => agent(`worker-${i}`)));
  const leases = (await Promise.all(workers.map((w) => w.lease()))).map((l) => l!);
  const failing = leases.findIndex((l) => partOf(l) === 1);
  await workers[failing]!.fail(leases[failing]!.task_id, leases[failing]!.lease_token, 'the encoder crashed on frame 812', false);
  t.is(await state(parentId), 'failed');
  t.regex((await queue.get(parentId))!.lastError ?? '', /^Chunk 2 failed: the encoder crashed on frame 812/);
  t.is(heard.failed.length, 1);
  t.is(heard.failed[0]!.code, 'TASK_FAILED');
  t.regex(heard.failed[0]!.reason, /the encoder crashed on frame 812/);
  const others = leases.map((l, i) => ({ l, w: workers[i]! })).filter((_, i) => i !== failing);
  for (const { l, w } of others)
    t.true((await w.progress(l.task_id, l.lease_token, 0.5)).cancel_requested, 'a running sibling is asked to stop');
  // A sibling that finishes anyway changes nothing.
  await others[0]!.w.complete(others[0]!.l.task_id, others[0]!.l.lease_token, { part: 9 });
  t.is(await state(parentId), 'failed');
  t.is((await stored(parentId)).length, 0);
  await new Promise((r) => setTimeout(r, 50));
  t.deepEqual(heard.after, [{ id: parentId, outcome: 'failed' }]);
});

test.serial('cancelling the parent cancels its queued children and stops its running one', async (t) => {
  const parentId = await splitParent(3);
  const worker = await agent('worker');
  const running = (await worker.lease())!;
  t.is(await queue.cancel(parentId), 'cancelled');
  t.is(await state(parentId), 'cancelled');
  const kids = await children(parentId);
  t.deepEqual(
    kids.filter((k) => k.id !== running.task_id).map((k) => k.state),
    ['cancelled', 'cancelled'],
  );
  t.true(kids.find((k) => k.id === running.task_id)!.cancelRequested);
  t.true((await worker.progress(running.task_id, running.lease_token, 0.3)).cancel_requested);
  // The agent stops as it does on a cancel: its failure ends the child as cancelled, never re-queued.
  await worker.fail(running.task_id, running.lease_token, 'cancelled', true);
  t.is(await state(running.task_id), 'cancelled');
  const late = await agent('late');
  t.is(await late.lease(300), undefined, 'nothing of the family is left to lease');
  t.is((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM tasks WHERE state IN ('queued', 'leased', 'waiting')`))[0]!.n, 0);
  t.deepEqual(
    heard.failed.map((f) => [f.id, f.code]),
    [[parentId, 'CANCELLED']],
  );
});

test.serial("a lost agent's child is re-leased like any task, and the parent still completes once", async (t) => {
  const parentId = await splitParent(2);
  const [lost, steady] = await Promise.all([agent('lost'), agent('steady')]);
  const lostLease = (await lost.lease())!;
  const steadyLease = (await steady.lease())!;
  await db.query(`UPDATE tasks SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [lostLease.task_id]);
  t.is(await queue.tick(), 1);
  t.is(await state(lostLease.task_id), 'queued');
  await t.throwsAsync(
    lost.complete(lostLease.task_id, lostLease.lease_token, { part: partOf(lostLease) }),
    { instanceOf: LeaseLostError },
    'the lost agent’s stale token is refused',
  );
  const rescuer = await agent('rescuer');
  const again = (await rescuer.lease())!;
  t.is(again.task_id, lostLease.task_id);
  t.is(again.attempt, 2);
  await steady.complete(steadyLease.task_id, steadyLease.lease_token, { part: partOf(steadyLease) });
  t.is(await state(parentId), 'waiting');
  await rescuer.complete(again.task_id, again.lease_token, { part: partOf(again) });
  t.is(await state(parentId), 'completed');
  const rows = await stored(parentId);
  t.is(rows.length, 1);
  t.deepEqual(rows[0]!.result.parts, [{ part: 0 }, { part: 1 }]);
  t.deepEqual(heard.completed, [parentId]);
});

test.serial('children are placed by capability: an agent without the required NVENC gets none of them', async (t) => {
  const parentId = await splitParent(2, { childPlacement: { requires: ['nvenc'] } });
  t.true((await children(parentId)).every((k) => k.requires.includes('nvenc')));
  const plain = await agent('plain');
  t.is(await plain.lease(300), undefined);
  const gpu = await agent('gpu', { nvenc: true, slots: 2 });
  const leased = [await gpu.lease(), await gpu.lease()];
  t.deepEqual(leased.map((l) => l && partOf(l)).sort(), [0, 1]);
});

test.serial("children count as their organization's running work: another organization's task is not stuck behind them", async (t) => {
  const parentId = await splitParent(4, {}, orgA);
  const first = await agent('first');
  const a0 = (await first.lease())!;
  t.is((await queue.get(a0.task_id))!.parentId, parentId);
  // Org B's one task, queued after org A's children, is next: org A already has a child running.
  const bTask = await enqueueParent({}, orgB);
  const second = await agent('second');
  const next = (await second.lease())!;
  t.is(next.task_id, bTask);
  await second.complete(next.task_id, next.lease_token, { done: true });
  // Then org A's children go on in their order.
  const after = (await second.lease())!;
  t.is((await queue.get(after.task_id))!.parentId, parentId);
  t.is(partOf(after), 1);
});

test.serial('only a type whose contract declares children may fan out', (t) => {
  const q = new TaskQueue(
    db,
    { leaseTtlMs: LEASE_TTL_MS, maxAttempts: 3, preferGraceMs: 0, waitingNoticeMs: 0, unmetNeedsFailMs: 0 },
    createLogger({ service: 'test' }, 'silent'),
    createMetrics(),
  );
  const err = t.throws(() =>
    q.registerHandler('probe-media', {
      async onComplete() {},
      async onFailed() {},
      async fanOut() {
        return [];
      },
      async fanIn() {
        return {};
      },
    }),
  );
  t.regex(err!.message, /probe-media contract declares no children/);
});

test.serial("a typed handler's children are read through their own contract, both ways", async (t) => {
  const render = (durationSec: number) => ({
    objectKey: `renders/${durationSec}.mp4`,
    sizeBytes: 100,
    contentType: 'video/mp4',
    durationSec,
  });
  const chunk = (frames: number) => ({ objectKey: `chunks/${frames}.mp4`, sizeBytes: 100, contentType: 'video/mp4', frames });
  const handler = withContract('render-short', {
    async onComplete() {},
    async onFailed() {},
    // A chunk that ends where it starts: well typed, but not a render-chunk payload (`toUs` must be
    // positive). The coordinator's own mistake, caught before any child is queued.
    async fanOut() {
      const chunk = {
        fromUs: 0,
        toUs: 0,
        shiftTicks: 0,
        index: 0,
        last: true,
        encoder: 'libx264' as const,
        gopFrames: 50,
        encodesSound: true,
      };
      return [{ type: 'render-chunk' as const, payload: { ...renderShortPayload(), chunk } }];
    },
    async fanIn(_c, _parent, result, children) {
      return { ...result, durationSec: children.results.reduce((sum, r) => sum + r.frames, 0) / 25 };
    },
  });
  const parent = { id: 'p1', type: 'render-short' } as TaskRow;
  const c = {} as Queryable;
  const joined = await handler.fanIn!(c, parent, render(1), { type: 'render-chunk', results: [chunk(500), chunk(250)] });
  t.is((joined as { durationSec: number }).durationSec, 30);
  const badChild = await t.throwsAsync(
    handler.fanIn!(c, parent, render(1), { type: 'render-chunk', results: [chunk(500), { objectKey: 'x' }] }),
  );
  t.true(badChild instanceof ContractViolation);
  t.regex(badChild!.message, /result does not match the render-chunk contract/);
  const badPayload = await t.throwsAsync(handler.fanOut!(c, parent, render(1)));
  t.true(badPayload instanceof ContractViolation);
  // The chunk's end is all it refuses: the rest of the payload fits.
  t.regex(badPayload!.message, /^payload does not match the render-chunk contract: chunk\.toUs: [^;]*$/);
});
