import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger, type Logger, type LogLevel } from '@shorts/common/logger';
import { repoRoot } from '@shorts/common/paths';
import { loadConfig } from '../../coordinator/src/config.js';
import { startCoordinator } from '../../coordinator/src/coordinator.js';
import type { Coordinator } from '../../coordinator/src/context.js';
import { createOrganization, issueApiKey, type Organization } from '../../coordinator/src/tenancy/tenancy.js';
import { TEST_CLUSTER_TOKEN } from './cluster-token.js';
import { createTestDatabase, dropTestDatabase } from './db.js';
import type { Parsed } from './parsed.js';

export interface TestCluster {
  app: Coordinator;
  dataDir: string;
  databaseUrl: string;
  agents: AgentProcess[];
  startAgent(env?: Record<string, string>): Promise<AgentProcess>;
  /** Kills (SIGKILL) every agent started and waits for each to exit. */
  killAgents(): Promise<void>;
  /** A new organization with an API key. */
  org(input?: { plan?: string; credits?: number; name?: string }): Promise<{ org: Organization; key: string }>;
  api(
    method: string,
    path: string,
    opts?: { key?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; body: Parsed; headers: Headers }>;
  /** The job as the API answers it once it is COMPLETED or FAILED; `seen` collects every progress value read. */
  settledJob(key: string, id: string, opts?: { timeoutMs?: number; seen?: number[] }): Promise<Parsed>;
  /** Another coordinator on the same database and data folder, with the cluster's settings (and `overrides`); the caller closes it. */
  startCoordinator(opts?: { overrides?: CoordinatorOverrides; log?: Logger }): Promise<Coordinator>;
  restartCoordinator(): Promise<void>;
  close(): Promise<void>;
}

export interface AgentProcess {
  proc: ChildProcess;
  logs: string[];
  name: string;
  waitForLog(pattern: RegExp, timeoutMs?: number): Promise<string>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export type CoordinatorOverrides = Parameters<typeof loadConfig>[0];

const quietLog = () => createLogger({ service: 'coordinator' }, (process.env.TEST_LOG_LEVEL as LogLevel | undefined) || 'silent');

/** A test coordinator's configuration: loopback on kernel-picked ports, no timers, the test cluster token, 4 s leases. */
export function testCoordinatorConfig(databaseUrl: string, dataDir: string, overrides: CoordinatorOverrides = {}) {
  return loadConfig(
    {
      databaseUrl,
      dataDir,
      port: 0,
      grpcPort: 0,
      host: '127.0.0.1',
      grpcHost: '127.0.0.1',
      timers: false,
      clusterToken: TEST_CLUSTER_TOKEN,
      leaseTtlMs: 4000,
      fetchAllowlist: '127.0.0.1',
      ...overrides,
    },
    {},
  );
}

export async function startCluster(name: string, overrides: CoordinatorOverrides = {}, opts: { log?: Logger } = {}): Promise<TestCluster> {
  const databaseUrl = await createTestDatabase(name);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `shorts-${name}-`));
  const log = opts.log ?? quietLog();
  let app = await startCoordinator(testCoordinatorConfig(databaseUrl, dataDir, overrides), log);
  const agents: AgentProcess[] = [];
  let agentSeq = 0;

  const cluster: TestCluster = {
    get app() {
      return app;
    },
    dataDir,
    databaseUrl,
    agents,
    async startAgent(env = {}) {
      const agentName = `agent-${++agentSeq}`;
      const proc = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot(), 'node-agent/src/main.ts')], {
        env: {
          ...process.env,
          COORDINATOR_GRPC: app.grpcAddress,
          CLUSTER_TOKEN: TEST_CLUSTER_TOKEN,
          AGENT_NAME: agentName,
          AGENT_WORK_DIR: path.join(dataDir, agentName),
          MAX_CONCURRENT_TASKS: '1',
          FETCH_ALLOWLIST: '127.0.0.1',
          AGENT_LEASE_WAIT_MS: '2000',
          LOG_LEVEL: 'debug',
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const logs: string[] = [];
      const waiters: Array<{ re: RegExp; resolve: (l: string) => void }> = [];
      const onData = (buf: Buffer) => {
        for (const line of buf.toString().split('\n').filter(Boolean)) {
          logs.push(line);
          if (process.env.TEST_AGENT_LOGS) console.error(`[${agentName}] ${line}`);
          for (const w of [...waiters])
            if (w.re.test(line)) {
              waiters.splice(waiters.indexOf(w), 1);
              w.resolve(line);
            }
        }
      };
      proc.stdout!.on('data', onData);
      proc.stderr!.on('data', onData);
      const agent: AgentProcess = {
        proc,
        logs,
        name: agentName,
        waitForLog(re, timeoutMs = 60_000) {
          const found = logs.find((l) => re.test(l));
          if (found) return Promise.resolve(found);
          return new Promise((resolve, reject) => {
            const timer = setTimeout(
              () => reject(new Error(`timed out waiting for ${re} in ${agentName} logs:\n${logs.slice(-20).join('\n')}`)),
              timeoutMs,
            );
            waiters.push({
              re,
              resolve: (l) => {
                clearTimeout(timer);
                resolve(l);
              },
            });
          });
        },
        async kill(signal = 'SIGKILL') {
          if (proc.exitCode !== null || proc.signalCode !== null) return;
          const exited = new Promise((r) => proc.once('exit', r));
          proc.kill(signal);
          await exited;
        },
      };
      agents.push(agent);
      await agent.waitForLog(/"agent ready"/, 60_000);
      return agent;
    },
    async killAgents() {
      await Promise.all(agents.map((a) => a.kill('SIGKILL')));
    },
    async org(input = {}) {
      const org = await createOrganization(app.db, {
        name: input.name ?? 'Test Org',
        plan: input.plan ?? 'pro',
        credits: input.credits ?? 100,
      });
      const { key } = await issueApiKey(app.db, org.id, 'test');
      return { org, key };
    },
    async api(method, urlPath, opts = {}) {
      const headers: Record<string, string> = { ...(opts.headers ?? {}) };
      if (opts.key) headers.authorization = `Bearer ${opts.key}`;
      if (opts.body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(app.httpUrl + urlPath, {
        method,
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      });
      const text = await res.text();
      let body: Parsed = text;
      try {
        body = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      return { status: res.status, body, headers: res.headers };
    },
    settledJob(key, id, opts = {}) {
      return waitFor(
        async () => {
          const r = await this.api('GET', `/api/jobs/${id}`, { key });
          opts.seen?.push(r.body.progress);
          return r.body.status === 'COMPLETED' || r.body.status === 'FAILED' ? r.body : undefined;
        },
        opts.timeoutMs ?? 240_000,
        `job ${id} to settle`,
      );
    },
    startCoordinator(more = {}) {
      return startCoordinator(testCoordinatorConfig(databaseUrl, dataDir, { ...overrides, ...more.overrides }), more.log ?? quietLog());
    },
    async restartCoordinator() {
      const grpcPort = Number(app.grpcAddress.split(':')[1]);
      const httpPort = Number(new URL(app.httpUrl).port);
      await app.close();
      app = await startCoordinator(testCoordinatorConfig(databaseUrl, dataDir, { port: httpPort, grpcPort, ...overrides }), log);
    },
    async close() {
      await cluster.killAgents();
      await app.close();
      await dropTestDatabase(databaseUrl);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return cluster;
}

/** A logger that keeps every record, for tests that check what the coordinator logged. */
export function recordingLogger(records: Array<Record<string, unknown>> = []): Logger & { records: Array<Record<string, unknown>> } {
  const make = (base: Record<string, unknown>): Logger => {
    const write = (level: string) => (msg: string, fields?: Record<string, unknown>) => {
      records.push({ level, msg, ...base, ...fields });
    };
    return {
      debug: write('debug'),
      info: write('info'),
      warn: write('warn'),
      error: write('error'),
      child: (f) => make({ ...base, ...f }),
    };
  };
  return Object.assign(make({}), { records });
}

/** Polls fn every `intervalMs` until it returns a truthy value. */
export async function waitFor<T>(
  fn: () => Promise<T | undefined | null | false>,
  timeoutMs = 60_000,
  what = 'condition',
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
