import pg from 'pg';
import path from 'node:path';
import os from 'node:os';
import { createLogger } from '@shorts/common/logger';
import { startEmbeddedPostgres } from '../../coordinator/src/db/embedded.js';

const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
let serverUrl: Promise<string> | undefined;

async function answers(url: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await c.connect();
    await c.end();
    return true;
  } catch {
    return false;
  }
}

/** TEST_DATABASE_URL, else the local server, else an embedded Postgres started for this run. */
async function adminUrl(): Promise<string> {
  const wanted = process.env.TEST_DATABASE_URL || DEFAULT_URL;
  if (await answers(wanted)) return wanted;
  const dir = path.join(os.tmpdir(), 'shorts-test-embedded-pg');
  const port = 54400 + (process.pid % 500);
  const embedded = await startEmbeddedPostgres(dir, port, createLogger({ service: 'test-pg' }, 'warn'));
  process.once('exit', () => void embedded.stop());
  return embedded.url.replace(/\/shorts$/, '/postgres');
}

/** A fresh database named after the test file, dropped and recreated on each run. */
export async function createTestDatabase(name: string): Promise<string> {
  serverUrl ??= adminUrl();
  const admin = await serverUrl;
  const dbName = `t_${name.replace(/[^a-z0-9]+/gi, '_').toLowerCase()}_${process.pid}`.slice(0, 60);
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await c.query(`CREATE DATABASE ${dbName}`);
  await c.end();
  const url = new URL(admin);
  url.pathname = `/${dbName}`;
  return url.toString();
}

export async function dropTestDatabase(url: string): Promise<void> {
  const admin = await serverUrl!;
  const name = new URL(url).pathname.slice(1);
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
  await c.end();
}
