// Real processes around a dedicated Postgres the test owns: a coordinator and agents as child
// processes, so a test can restart the database, kill the coordinator, cut an agent's network and
// fill its disk, then check what a user would: every job ends, nothing is kept twice, money and
// storage add up. (The machine's shared Postgres at :5432 is never touched.)
import type { ExecutionContext } from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@shorts/common/logger';
import { repoRoot } from '@shorts/common/paths';
import { Db } from '../../coordinator/src/db/db.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../coordinator/src/db/embedded.js';
import { createOrganization, issueApiKey } from '../../coordinator/src/tenancy/tenancy.js';
import { waitFor } from './cluster.js';
import { TEST_CLUSTER_TOKEN } from './cluster-token.js';
import type { Parsed } from './parsed.js';
import { freePort } from './processes.js';

const CLUSTER_TOKEN = TEST_CLUSTER_TOKEN;

export interface LoggedProcess {
  proc: ChildProcess;
  logs: string[];
  waitForLog(re: RegExp, opts?: { after?: number; timeoutMs?: number }): Promise<string>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** A node process running one of our TypeScript entry points, its JSON log lines kept. */
export function spawnLogged(name: string, entry: string, env: Record<string, string>): LoggedProcess {
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot(), entry)], {
    cwd: repoRoot(),
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const onData = (buf: Buffer) => {
    for (const line of buf.toString().split('\n').filter(Boolean)) {
      logs.push(line);
      if (process.env.TEST_AGENT_LOGS) console.error(`[${name}] ${line}`);
    }
  };
  proc.stdout!.on('data', onData);
  proc.stderr!.on('data', onData);
  return {
    proc,
    logs,
    async waitForLog(re, { after = 0, timeoutMs = 60_000 } = {}) {
      try {
        return await waitFor(async () => logs.slice(after).find((l) => re.test(l)), timeoutMs, `${re} in ${name}'s log`);
      } catch (err) {
        throw new Error(`${(err as Error).message}:\n${logs.slice(-20).join('\n')}`, { cause: err });
      }
    },
    async kill(signal = 'SIGKILL') {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill(signal);
      await exited;
    },
  };
}

/** What every coordinator process of these suites runs with: loopback, the suite's token, 4 s leases, a 0.5 s watchdog. */
export const COORDINATOR_PROCESS_ENV: Record<string, string> = {
  HOST: '127.0.0.1',
  GRPC_HOST: '127.0.0.1',
  CLUSTER_TOKEN,
  FETCH_ALLOWLIST: '127.0.0.1',
  LOG_LEVEL: 'info',
  LEASE_TTL_MS: '4000',
  WATCHDOG_INTERVAL_MS: '500',
};

/** A coordinator process (coordinator/src/main.ts) with `env` on top of COORDINATOR_PROCESS_ENV, once it has said it started. */
export async function spawnCoordinator(name: string, env: Record<string, string>): Promise<LoggedProcess> {
  const coordinator = spawnLogged(name, 'coordinator/src/main.ts', { ...COORDINATOR_PROCESS_ENV, ...env });
  return ready(coordinator, /"msg":"coordinator started"/);
}

/** An agent process (node-agent/src/main.ts) named `name`, working in `workDir` (made here), once it is ready. */
export async function spawnAgent(
  name: string,
  coordinatorGrpc: string,
  workDir: string,
  env: Record<string, string> = {},
): Promise<LoggedProcess> {
  await mkdir(workDir, { recursive: true });
  const agent = spawnLogged(name, 'node-agent/src/main.ts', {
    COORDINATOR_GRPC: coordinatorGrpc,
    CLUSTER_TOKEN,
    AGENT_NAME: name,
    AGENT_WORK_DIR: workDir,
    MAX_CONCURRENT_TASKS: '1',
    FETCH_ALLOWLIST: '127.0.0.1',
    AGENT_LEASE_WAIT_MS: '2000',
    LOG_LEVEL: 'debug',
    ...env,
  });
  return ready(agent, /"msg":"agent ready"/);
}

/** The process once its log says `re` (within 90 s); killed when it never does. */
async function ready(proc: LoggedProcess, re: RegExp): Promise<LoggedProcess> {
  try {
    await proc.waitForLog(re, { timeoutMs: 90_000 });
    return proc;
  } catch (err) {
    await proc.kill('SIGKILL');
    throw err;
  }
}

/** An API call with a bearer key and a JSON body; the answer's body parsed when it is JSON, else its text. */
export async function callApi(
  baseUrl: string,
  key: string,
  method: string,
  urlPath: string,
  body?: unknown,
): Promise<{ status: number; body: Parsed; headers: Headers }> {
  const res = await fetch(baseUrl + urlPath, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: Parsed = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** A new organization and an API key of it, straight in the database. */
export async function orgWithKey(
  db: Db,
  name: string,
  plan: string,
  credits: number,
  keyName: string,
): Promise<{ id: string; key: string }> {
  const org = await createOrganization(db, { name, plan, credits });
  const { key } = await issueApiKey(db, org.id, keyName);
  return { id: org.id, key };
}

/**
 * A TCP proxy that can be cut: while cut, bytes in flight are held (not refused: a cut cable
 * answers nothing, it does not reset connections) and new connections wait; restored, they flow.
 */
export interface TcpProxy {
  address: string;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let isCut = false;
  const pairs = new Set<[net.Socket, net.Socket]>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    const pair: [net.Socket, net.Socket] = [client, upstream];
    pairs.add(pair);
    if (isCut) {
      client.pause();
      upstream.pause();
    }
    client.pipe(upstream);
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    cut() {
      isCut = true;
      for (const [a, b] of pairs) {
        a.pause();
        b.pause();
      }
    },
    restore() {
      isCut = false;
      for (const [a, b] of pairs) {
        a.resume();
        b.resume();
      }
    },
    async close() {
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      await new Promise((r) => server.close(r));
    },
  };
}

export interface FaultStack {
  dataDir: string;
  db: Db;
  coordinator: LoggedProcess;
  httpUrl: string;
  grpcAddress: string;
  startCoordinator(): Promise<void>;
  restartPostgres(downMs: number): Promise<void>;
  startAgent(name: string, env?: Record<string, string>): Promise<LoggedProcess>;
  org(plan: string, credits: number): Promise<{ id: string; key: string }>;
  api(key: string, method: string, urlPath: string, body?: unknown): Promise<{ status: number; body: Parsed }>;
  close(): Promise<void>;
}

const quiet = createLogger({ service: 'fault-pg' }, 'warn');

export async function startFaultStack(name: string, coordinatorEnv: Record<string, string> = {}): Promise<FaultStack> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `shorts-fault-${name}-`));
  // The embedded Postgres runs as the `postgres` user when tests run as root.
  await chmod(dataDir, 0o755);
  const pgPort = await freePort();
  const pgDir = path.join(dataDir, 'pg');
  let pg: EmbeddedDatabase = await startEmbeddedPostgres(pgDir, pgPort, quiet);
  const db = new Db(pg.url, 4);
  const ports = { http: await freePort(), grpc: await freePort() };
  const agents: LoggedProcess[] = [];
  const ownCoordinator = () =>
    spawnCoordinator('coordinator', {
      DATABASE_URL: pg.url,
      DATA_DIR: path.join(dataDir, 'coordinator'),
      PORT: String(ports.http),
      GRPC_PORT: String(ports.grpc),
      ...coordinatorEnv,
    });

  const stack: FaultStack = {
    dataDir,
    db,
    coordinator: await ownCoordinator(),
    httpUrl: `http://127.0.0.1:${ports.http}`,
    grpcAddress: `127.0.0.1:${ports.grpc}`,
    async startCoordinator() {
      stack.coordinator = await ownCoordinator();
    },
    async restartPostgres(downMs) {
      await pg.stop();
      await new Promise((r) => setTimeout(r, downMs));
      pg = await startEmbeddedPostgres(pgDir, pgPort, quiet);
    },
    async startAgent(agentName, env = {}) {
      const agent = await spawnAgent(agentName, stack.grpcAddress, path.join(dataDir, 'work', agentName), env);
      agents.push(agent);
      return agent;
    },
    org(plan, credits) {
      return orgWithKey(db, `Fault ${name}`, plan, credits, 'fault');
    },
    async api(key, method, urlPath, body) {
      const { status, body: parsed } = await callApi(stack.httpUrl, key, method, urlPath, body);
      return { status, body: parsed };
    },
    async close() {
      await Promise.all(agents.map((a) => a.kill('SIGKILL')));
      await stack.coordinator.kill('SIGKILL');
      await db.close();
      await pg.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return stack;
}

/** Every object file under the coordinator's local store for one organization, with its size. */
export async function storedObjects(stack: FaultStack, organizationId: string): Promise<Map<string, number>> {
  const root = path.join(stack.dataDir, 'coordinator', 'objects');
  const found = new Map<string, number>();
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) await walk(full);
      else found.set(path.relative(root, full).split(path.sep).join('/'), (await stat(full)).size);
    }
  };
  await walk(path.join(root, 'orgs', organizationId));
  return found;
}

export interface Settled {
  jobs: Array<{ id: string; status: string; message: string | null; cost: number | null }>;
  renders: Array<{ id: string; status: string; message: string | null }>;
}

/**
 * Waits until every job and render of the organization has ended, then checks what a user would
 * after a fault: each ended COMPLETED/done or FAILED/error with a message; no output kept twice
 * (one file row per job and name, one object per row and none without a row); credits charged
 * exactly once for each completed job and nothing left reserved; storage usage equal to the bytes
 * stored. Returns the end states for scenario-specific checks.
 */
export async function assertSettled(
  t: ExecutionContext,
  stack: FaultStack,
  org: { id: string },
  initialCredits: number,
  timeoutMs = 240_000,
): Promise<Settled> {
  const db = stack.db;
  await waitFor(
    async () => {
      const open = await db
        .one<{ n: number }>(
          `SELECT (SELECT count(*) FROM jobs WHERE organization_id = $1 AND status = 'PROCESSING')
            + (SELECT count(*) FROM renders WHERE organization_id = $1 AND status IN ('queued', 'progress'))
            + (SELECT count(*) FROM tasks WHERE organization_id = $1 AND state IN ('queued', 'leased')) AS n`,
          [org.id],
        )
        .catch(() => undefined);
      return open && Number(open.n) === 0;
    },
    timeoutMs,
    'every job, render and task to end',
  );

  const jobs = await db.query<{ id: string; status: string; message: string | null; cost: number | null }>(
    `SELECT id, status, error_message AS message, cost::float AS cost FROM jobs WHERE organization_id = $1 ORDER BY created_at`,
    [org.id],
  );
  const renders = await db.query<{ id: string; status: string; message: string | null; fileId: string | null }>(
    `SELECT id, status, error_message AS message, file_id AS "fileId" FROM renders WHERE organization_id = $1 ORDER BY created_at`,
    [org.id],
  );
  for (const j of jobs) {
    t.true(['COMPLETED', 'FAILED'].includes(j.status), `job ${j.id} ${j.status}`);
    if (j.status === 'FAILED')
      t.true(typeof j.message === 'string' && j.message.length > 10, `job ${j.id} failed with a message: ${j.message}`);
  }
  for (const r of renders) {
    t.true(['done', 'error'].includes(r.status), `render ${r.id} ${r.status}`);
    if (r.status === 'error')
      t.true(typeof r.message === 'string' && r.message.length > 10, `render ${r.id} failed with a message: ${r.message}`);
    else t.true(!!r.fileId, `render ${r.id} has its file`);
  }
  const failures = [...jobs, ...renders].filter((x) => x.message).map((x) => `${x.id}: ${x.message}`);
  if (failures.length) t.log(`failed with: ${failures.join(' | ')}`);

  // No output twice.
  const dupes = await db.query(
    `SELECT job_id, name, count(*)::int AS n FROM files WHERE organization_id = $1 GROUP BY job_id, name HAVING count(*) > 1`,
    [org.id],
  );
  t.deepEqual(dupes, [], 'one file row per job and name');
  const rendersPerFile = await db.query(
    `SELECT file_id, count(*)::int AS n FROM renders WHERE organization_id = $1 AND file_id IS NOT NULL GROUP BY file_id HAVING count(*) > 1`,
    [org.id],
  );
  t.deepEqual(rendersPerFile, [], 'one file per render');
  const files = await db.query<{ key: string; thumb: string | null; captions: string | null; size: string }>(
    `SELECT object_key AS key, thumbnail_key AS thumb, captions_key AS captions, size_bytes AS size FROM files WHERE organization_id = $1`,
    [org.id],
  );
  const objects = await storedObjects(stack, org.id);
  // A render's row names its video, its thumbnail and the caption script it burned in.
  const rowKeys = new Set(
    files.flatMap((f) => [f.key, ...(f.thumb ? [f.thumb] : []), ...(f.captions ? [f.captions] : [])]).map((k) => k.replace(/^\/+/, '')),
  );
  t.deepEqual([...objects.keys()].sort(), [...rowKeys].sort(), 'stored objects are exactly those the file rows name');
  for (const f of files) t.is(objects.get(f.key), Number(f.size), `size of ${f.key}`);

  // Money and storage exact.
  const orgRow = (await db.one<{ credits: number; reserved: number; used: number }>(
    `SELECT credits::float AS credits, reserved_credits::float AS reserved, storage_used_bytes AS used FROM organizations WHERE id = $1`,
    [org.id],
  ))!;
  const charged = jobs.filter((j) => j.status === 'COMPLETED').reduce((n, j) => n + Number(j.cost), 0);
  t.is(
    Math.round(orgRow.credits * 100),
    Math.round((initialCredits - charged) * 100),
    'credits: each completed job charged once, failed ones nothing',
  );
  t.is(orgRow.reserved, 0, 'nothing left reserved');
  const ledger = await db.query<{ jobId: string; kind: string; amount: number }>(
    `SELECT job_id AS "jobId", kind, amount::float AS amount FROM credit_ledger WHERE organization_id = $1 AND kind = 'charge'`,
    [org.id],
  );
  t.deepEqual(
    ledger.map((l) => [l.jobId, l.amount]).sort(),
    jobs
      .filter((j) => j.status === 'COMPLETED')
      .map((j) => [j.id, -Number(j.cost)])
      .sort(),
    'one charge per completed job',
  );
  t.is(
    Number(orgRow.used),
    files.reduce((n, f) => n + Number(f.size), 0),
    'storage usage is the bytes stored',
  );
  return { jobs, renders };
}
