// Fan-out whose join needs an agent (finishOnAgent, coordinator/src/tasks/fan-out.ts), against a real
// Postgres with in-process agents speaking the real gRPC protocol (FakeAgent). The test domain sits
// on render-short (whose children are render-chunk tasks): a parent's payload says how many parts it has; its final part's payload carries
// the parts' results, and only the final part's completion reaches the domain.
import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import { createLogger } from '@shorts/common/logger';
import type { TaskPayload } from '@shorts/common/tasks/contracts';
import { Db } from '../coordinator/src/db/db.js';
import { migrate } from '../coordinator/src/db/migrate.js';
import { createMetrics } from '../coordinator/src/metrics/metrics.js';
import { TaskQueue } from '../coordinator/src/tasks/task-queue.js';
import { AgentRegistry, startGrpcServer } from '../coordinator/src/cluster/agent-service.js';
import { createObjectStore } from '../coordinator/src/storage/index.js';
import { createObjectUrls } from '../coordinator/src/storage/urls.js';
import { createOrganization } from '../coordinator/src/tenancy/tenancy.js';
import { createTestDatabase, dropTestDatabase } from './helpers/db.js';
import { FakeAgent } from './helpers/fake-agent.js';

const TOKEN = 'test-cluster-token-0123456789';
const LEASE_TTL_MS = 4000;

let db: Db;
let databaseUrl: string;
let queue: TaskQueue;
let grpcServer: grpc.Server;
let address: string;
let storeDir: string;
let org: string;
const agents: FakeAgent[] = [];
const heard = { completed: [] as Array<{ id: string; result: unknown }>, progress: [] as number[] };

test.before(async () => {
  databaseUrl = await createTestDatabase('task_fanout_final');
  db = new Db(databaseUrl);
  await migrate(db);
  const log = createLogger({ service: 'test' }, (process.env.TEST_LOG_LEVEL as any) || 'silent');
  const metrics = createMetrics();
  queue = new TaskQueue(db, { leaseTtlMs: LEASE_TTL_MS, maxAttempts: 2, preferGraceMs: 60_000, waitingNoticeMs: 60_000, unmetNeedsFailMs: 120_000 }, log, metrics);
  queue.registerHandler('render-short', {
    async fanOut(_c, parent, result) {
      // The final part's result has no `own`: nothing more to split.
      if (!(result as { own?: string }).own) return [];
      return Array.from({ length: Number(parent.payload.parts) }, (_, part) => ({ payload: { part } }));
    },
    async finishOnAgent(_c, parent, result, childResults) {
      return { ...parent.payload, final: { own: result, parts: childResults } };
    },
    async onChildrenProgress(_c, _parent, fraction) {
      heard.progress.push(fraction);
    },
    async onComplete(_c, task, result) {
      heard.completed.push({ id: task.id, result });
    },
    async onFailed() {},
  });
  // The children: ordinary tasks of their own type, which never reach a domain themselves.
  queue.registerHandler('render-chunk', { async onComplete() {}, async onFailed() {} });
  await queue.start();
  storeDir = await mkdtemp(path.join(os.tmpdir(), 'task-fanout-final-'));
  const store = createObjectStore({ kind: 'local', root: storeDir });
  const urls = createObjectUrls(store, { publicUrl: 'http://127.0.0.1:9', secret: 'x'.repeat(32), ttlSec: 60 });
  const bound = await startGrpcServer(
    { db, queue, log, metrics, urls, store, clusterToken: TOKEN, leaseTtlMs: LEASE_TTL_MS, leaseWaitMs: 10_000, agentUploadMaxBytes: 1_000_000 },
    new AgentRegistry(LEASE_TTL_MS),
    { host: '127.0.0.1', port: 0 },
  );
  grpcServer = bound.server;
  address = `127.0.0.1:${bound.port}`;
  org = (await createOrganization(db, { name: 'Org', plan: 'pro', credits: 10 })).id;
});

test.after.always(async () => {
  agents.forEach((a) => a.close());
  grpcServer?.forceShutdown();
  await queue?.stop();
  await db?.close();
  if (databaseUrl) await dropTestDatabase(databaseUrl);
  if (storeDir) await rm(storeDir, { recursive: true, force: true });
});

test.serial('a join that needs an agent: after the last child the parent is queued again with its final payload, and completes once after that part', async (t) => {
  const a = await new FakeAgent(address, TOKEN, 'runner').register(['render-short', 'render-chunk'], {});
  agents.push(a);
  const parentId = await queue.enqueue(db.pool, { type: 'render-short', organizationId: org, subjectId: null, payload: { parts: 2 } as unknown as TaskPayload<'render-short'> });
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
  t.deepEqual(kids.map((k) => k.state), ['completed', 'completed'], 'no second fan-out');
});
