// The lease queue behind a real gRPC server, against a real Postgres, with no coordinator around
// it: for tests that give the queue a small domain of their own and drive it with FakeAgents.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import { createLogger, type Logger, type LogLevel } from '@shorts/common/logger';
import type { TaskType } from '@shorts/common/tasks';
import { Db } from '../../coordinator/src/db/db.js';
import { migrate } from '../../coordinator/src/db/migrate.js';
import { createMetrics, type Metrics } from '../../coordinator/src/metrics/metrics.js';
import { TaskQueue, type TaskQueueOptions } from '../../coordinator/src/tasks/task-queue.js';
import { AgentRegistry, startGrpcServer } from '../../coordinator/src/cluster/agent-service.js';
import { createObjectStore } from '../../coordinator/src/storage/index.js';
import { createObjectUrls } from '../../coordinator/src/storage/urls.js';
import { createOrganization } from '../../coordinator/src/tenancy/tenancy.js';
import { TEST_CLUSTER_TOKEN } from './cluster-token.js';
import { createTestDatabase, dropTestDatabase } from './db.js';
import { FakeAgent } from './fake-agent.js';

export interface QueueServer<Q extends TaskQueue> {
  db: Db;
  queue: Q;
  metrics: Metrics;
  /** host:port of the gRPC server the agents speak to. */
  address: string;
  /** The FakeAgents agent() made; close() closes those still here. */
  agents: FakeAgent[];
  /** A FakeAgent registered for `taskTypes` as `host` would advertise them, kept in `agents`. */
  agent(name: string, taskTypes?: TaskType[], host?: Parameters<FakeAgent['register']>[1]): Promise<FakeAgent>;
  /** A new organization's id. */
  organization(name: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * A fresh database (migrated), a queue with `queueOptions` (of the class `createQueue` makes, a plain
 * TaskQueue if none), `prepare` run before the queue starts (test tables, domain handlers), then a
 * gRPC server for it on a kernel-picked port, with a local object store and the test cluster token.
 */
export async function startQueueServer<Q extends TaskQueue = TaskQueue>(
  name: string,
  opts: {
    queueOptions: TaskQueueOptions;
    createQueue?: (db: Db, options: TaskQueueOptions, log: Logger, metrics: Metrics) => Q;
    prepare?: (db: Db, queue: Q) => Promise<void> | void;
  },
): Promise<QueueServer<Q>> {
  const databaseUrl = await createTestDatabase(name);
  const db = new Db(databaseUrl);
  await migrate(db);
  const log = createLogger({ service: 'test' }, (process.env.TEST_LOG_LEVEL as LogLevel | undefined) || 'silent');
  const metrics = createMetrics();
  const queue = opts.createQueue
    ? opts.createQueue(db, opts.queueOptions, log, metrics)
    : (new TaskQueue(db, opts.queueOptions, log, metrics) as Q);
  await opts.prepare?.(db, queue);
  await queue.start();
  const storeDir = await mkdtemp(path.join(os.tmpdir(), `${name.replace(/_/g, '-')}-`));
  const store = createObjectStore({ kind: 'local', root: storeDir });
  const urls = createObjectUrls(store, { publicUrl: 'http://127.0.0.1:9', secret: 'x'.repeat(32), ttlSec: 60 });
  const leaseTtlMs = opts.queueOptions.leaseTtlMs;
  let grpcServer: grpc.Server;
  try {
    const bound = await startGrpcServer(
      {
        db,
        queue,
        log,
        metrics,
        urls,
        store,
        clusterToken: TEST_CLUSTER_TOKEN,
        leaseTtlMs,
        leaseWaitMs: 10_000,
        agentUploadMaxBytes: 1_000_000,
      },
      new AgentRegistry(leaseTtlMs),
      { host: '127.0.0.1', port: 0 },
    );
    grpcServer = bound.server;
    const agents: FakeAgent[] = [];
    const server: QueueServer<Q> = {
      db,
      queue,
      metrics,
      agents,
      address: `127.0.0.1:${bound.port}`,
      async agent(agentName, taskTypes = ['probe-media'], host = {}) {
        const a = await new FakeAgent(server.address, TEST_CLUSTER_TOKEN, agentName).register(taskTypes, host);
        agents.push(a);
        return a;
      },
      async organization(orgName) {
        return (await createOrganization(db, { name: orgName, plan: 'pro', credits: 10 })).id;
      },
      async close() {
        agents.splice(0).forEach((a) => a.close());
        grpcServer.forceShutdown();
        await queue.stop();
        await db.close();
        await dropTestDatabase(databaseUrl);
        await rm(storeDir, { recursive: true, force: true });
      },
    };
    return server;
  } catch (err) {
    await queue.stop();
    await db.close();
    await dropTestDatabase(databaseUrl);
    await rm(storeDir, { recursive: true, force: true });
    throw err;
  }
}
