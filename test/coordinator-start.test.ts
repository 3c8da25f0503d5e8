// A coordinator that cannot start (its gRPC port taken by another program) must fail with the reason
// and stop what it had started on the way: its HTTP port is free again and no pg-boss connection of
// its stays open on the database, so an operator who fixes the port and starts again finds nothing
// left behind.
import test from 'ava';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { mkdtemp, rm } from 'node:fs/promises';
import pg from 'pg';
import { startCoordinator } from '../coordinator/src/coordinator.js';
import { createTestDatabase, dropTestDatabase } from './helpers/db.js';
import { testCoordinatorConfig, waitFor } from './helpers/cluster.js';
import { freePort, portIsFree } from './helpers/processes.js';
import { createLogger } from '@shorts/common/logger';

async function connectionsOf(databaseUrl: string, applicationName: string): Promise<number> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const { rows } = await c.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1 AND pid <> pg_backend_pid()',
      [applicationName],
    );
    return rows[0]!.n;
  } finally {
    await c.end();
  }
}

test('a start that fails half-way (gRPC port taken) frees its HTTP port and closes its pg-boss connections', async (t) => {
  const databaseUrl = await createTestDatabase('coordinator-start');
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'shorts-coordinator-start-'));
  t.teardown(async () => {
    await dropTestDatabase(databaseUrl);
    await rm(dataDir, { recursive: true, force: true });
  });
  const squatter = net.createServer();
  await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => squatter.close(() => r())));
  const grpcPort = (squatter.address() as net.AddressInfo).port;
  const httpPort = await freePort();

  const config = testCoordinatorConfig(databaseUrl, dataDir, { port: httpPort, grpcPort });
  await t.throwsAsync(startCoordinator(config, createLogger({ service: 'coordinator' }, 'silent')));

  t.true(await portIsFree(httpPort), 'the HTTP server it had opened is closed');
  // A backend leaves pg_stat_activity a moment after its client closes the socket (on a loaded machine,
  // some tens of milliseconds later); a connection still there after 5 s is one the pool never closed.
  const closed = await waitFor(async () => (await connectionsOf(databaseUrl, 'pgboss')) === 0, 5000, 'pg-boss to close its pool').catch(
    () => false,
  );
  t.true(closed, 'pg-boss closed its pool');

  // Nothing left behind: once the port is free, the same configuration starts and serves.
  await new Promise<void>((r) => squatter.close(() => r()));
  const app = await startCoordinator(config, createLogger({ service: 'coordinator' }, 'silent'));
  t.teardown(() => app.close());
  const health = await fetch(`${app.httpUrl}/healthz`);
  t.is(health.status, 200);
});
