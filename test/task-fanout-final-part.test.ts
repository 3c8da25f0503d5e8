// Fan-out whose join needs an agent (finishOnAgent, coordinator/src/tasks/fan-out.ts), against a real
// Postgres with in-process agents speaking the real gRPC protocol (FakeAgent). The test domain sits
// on render-short (whose children are render-chunk tasks): a parent's payload says how many parts it has; its final part's payload carries
// the parts' results, and only the final part's completion reaches the domain.
import test from 'ava';
import type { Db } from '../coordinator/src/db/db.js';
import type { TaskQueue } from '../coordinator/src/tasks/task-queue.js';
import { startQueueServer, type QueueServer } from './helpers/queue-server.js';
import { renderShortPayload } from './helpers/render-payload.js';

const LEASE_TTL_MS = 4000;

let server: QueueServer<TaskQueue>;
let db: Db;
let queue: TaskQueue;
let org: string;
const heard = { completed: [] as Array<{ id: string; result: unknown }>, progress: [] as number[] };

test.before(async () => {
  server = await startQueueServer('task_fanout_final', {
    queueOptions: { leaseTtlMs: LEASE_TTL_MS, maxAttempts: 2, preferGraceMs: 60_000, waitingNoticeMs: 60_000, unmetNeedsFailMs: 120_000 },
    prepare(_d, q) {
      q.registerHandler('render-short', {
        async fanOut(_c, parent, result) {
          // The final part's result has no `own`: nothing more to split.
          if (!(result as { own?: string }).own) return [];
          return Array.from({ length: Number(parent.payload.parts) }, (_, part) => ({ type: 'render-chunk' as const, payload: { part } }));
        },
        async finishOnAgent(_c, parent, result, children) {
          return { ...parent.payload, final: { own: result, parts: children.results } };
        },
        async onChildrenProgress(_c, _parent, _type, fraction) {
          heard.progress.push(fraction);
        },
        async onComplete(_c, task, result) {
          heard.completed.push({ id: task.id, result });
        },
        async onFailed() {},
      });
      // The children: ordinary tasks of their own type, which never reach a domain themselves.
      q.registerHandler('render-chunk', { async onComplete() {}, async onFailed() {} });
    },
  });
  ({ db, queue } = server);
  org = await server.organization('Org');
});

test.after.always(() => server?.close());

test.serial(
  'a join that needs an agent: after the last child the parent is queued again with its final payload, and completes once after that part',
  async (t) => {
    const a = await server.agent('runner', ['render-short', 'render-chunk'], {});
    const parentId = await queue.enqueue(db.pool, {
      type: 'render-short',
      organizationId: org,
      subjectId: null,
      // A render-short's payload that also says how many parts this test's domain splits it into.
      payload: Object.assign(renderShortPayload(), { parts: 2 }),
    });
    const first = (await a.lease())!;
    t.is(first.task_id, parentId);
    await a.complete(first.task_id, first.lease_token, { own: 'probed' });
    t.is((await queue.get(parentId))!.state, 'waiting');

    const c0 = (await a.lease())!;
    await a.progress(c0.task_id, c0.lease_token, 0.5);
    await a.complete(c0.task_id, c0.lease_token, { part: JSON.parse(c0.payload_json).part });
    t.is((await queue.get(parentId))!.state, 'waiting', 'one child still runs');
    const c1 = (await a.lease())!;
    await a.complete(c1.task_id, c1.lease_token, { part: JSON.parse(c1.payload_json).part });
    // The children's share, as each reported and completed: a quarter, a half, then all of it.
    t.deepEqual(heard.progress, [0.25, 0.5, 1]);

    // Queued again, fresh attempts, its final payload carrying the parts in child order.
    const again = (await queue.get(parentId))!;
    t.is(again.state, 'queued');
    t.is(again.attempts, 0);
    t.deepEqual(heard.completed, [], 'nothing reaches the domain before the final part');
    const last = (await a.lease())!;
    t.is(last.task_id, parentId);
    t.deepEqual(JSON.parse(last.payload_json).final, { own: { own: 'probed' }, parts: [{ part: 0 }, { part: 1 }] });
    await a.complete(last.task_id, last.lease_token, { joined: true });
    t.is((await queue.get(parentId))!.state, 'completed');
    t.deepEqual(heard.completed, [{ id: parentId, result: { joined: true } }]);
    const kids = await db.query<{ state: string }>(`SELECT state FROM tasks WHERE parent_id = $1`, [parentId]);
    t.deepEqual(
      kids.map((k) => k.state),
      ['completed', 'completed'],
      'no second fan-out',
    );
  },
);
