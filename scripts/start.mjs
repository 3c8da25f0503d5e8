#!/usr/bin/env node
// `npm start`: the whole thing on one machine with no configuration — an embedded Postgres, local
// file storage, one coordinator and one agent. Prints the URL and an API key; Ctrl-C stops it all.
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stopLimitMs, superviseAgent } from './agent-supervisor.mjs';
import { buildStudio } from './build-studio.mjs';
import { linkCompiledCommon } from './link-common.mjs';
import { ensureSystemTools } from './system-tools.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dataDir = path.resolve(process.env.DATA_DIR ?? path.join(root, 'data'));
const port = Number(process.env.PORT ?? 3000);
const grpcPort = Number(process.env.GRPC_PORT ?? 50051);
const dist = (p) => path.join(root, 'dist', p);
const say = (msg) => process.stdout.write(`[start] ${msg}\n`);

// The agent's speech recognition and YouTube download come from the OS (scripts/system-tools.mjs
// installs them on Debian/Ubuntu). Without them the agent still starts but refuses video analysis.
function ensureSystemPackages() {
  const { missing, advice } = ensureSystemTools('start', { log: say });
  if (!missing.length) return;
  say('missing system tools; the agent refuses video analysis without them:');
  for (const line of advice.split('\n')) say(line);
}

async function waitForHealth(url, child, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error('the coordinator exited during start-up (see its log above)');
    try {
      // Bounded: whatever else holds the port (the coordinator then fails on it) may never answer.
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`the coordinator did not answer ${url}`);
}

// START_FROM_SOURCE=1 runs the TypeScript sources through tsx instead of building dist/ (tests, hacking).
const fromSource = process.env.START_FROM_SOURCE === '1';
const entry = (rel) =>
  fromSource ? ['--enable-source-maps', '--import', 'tsx', path.join(root, `${rel}.ts`)] : ['--enable-source-maps', dist(`${rel}.js`)];

/** Runs an admin command against the running coordinator's database (never one of its own: an admin
 *  command that finds no database under DATA_DIR starts its Postgres, which, when npm start died as
 *  one ran, left a second Postgres on the folder after the coordinator had stopped its own). */
function admin(databaseUrl, args) {
  const out = execFileSync(process.execPath, [...entry('coordinator/src/cli/admin'), ...args, '--json'], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    encoding: 'utf8',
  });
  return JSON.parse(out);
}

/** A local organization and one API key, made on the first start and kept under data/. */
function localCredentials(databaseUrl) {
  const file = path.join(dataDir, 'local-credentials.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8'));
  const org = admin(databaseUrl, ['org', 'create', '--name', 'Local', '--plan', 'business', '--credits', '1000']);
  const key = admin(databaseUrl, ['key', 'issue', '--org', org.id, '--name', 'local']);
  const creds = { organizationId: org.id, apiKey: key.key };
  writeFileSync(file, JSON.stringify(creds, null, 2), { mode: 0o600 });
  return creds;
}

/** The web studio's local user (made once, owner of the local organization) and a fresh one-time sign-in link. */
function studioSignIn(databaseUrl, creds) {
  const file = path.join(dataDir, 'local-credentials.json');
  if (!creds.userId) {
    creds.userId = admin(databaseUrl, [
      'user',
      'create',
      '--email',
      'local@localhost',
      '--name',
      'Local user',
      '--org',
      creds.organizationId,
      '--role',
      'owner',
    ]).id;
    writeFileSync(file, JSON.stringify(creds, null, 2), { mode: 0o600 });
  }
  return admin(databaseUrl, ['user', 'login-link', '--user', creds.userId, '--ttl', '3600']).url;
}

async function main() {
  mkdirSync(dataDir, { recursive: true });
  ensureSystemPackages();
  if (!fromSource && (!existsSync(dist('coordinator/src/main.js')) || process.env.SKIP_BUILD !== '1')) {
    say('building (tsc)');
    const build = spawnSync(
      process.execPath,
      [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.json')],
      { stdio: 'inherit' },
    );
    if (build.status !== 0 && !existsSync(dist('coordinator/src/main.js'))) throw new Error('build failed');
    linkCompiledCommon();
  }
  buildStudio({ log: say }); // the web studio at /studio/, rebuilt only when its sources changed

  const env = { ...process.env, DATA_DIR: dataDir, PORT: String(port), GRPC_PORT: String(grpcPort) };
  // Own process groups: Ctrl-C reaches only this script, which then stops the agent, the
  // coordinator and its embedded Postgres in order instead of all at once. The IPC channel makes
  // the coordinator stop (and stop its Postgres) when this script dies without a chance to.
  const coordinator = spawn(process.execPath, entry('coordinator/src/main'), {
    cwd: root,
    env,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    detached: true,
  });
  say(`starting the coordinator (pid ${coordinator.pid})`);
  const ready = new Promise((resolve) => {
    coordinator.on('message', (m) => {
      if (m?.type === 'ready') resolve(m);
    });
  });
  const url = `http://127.0.0.1:${port}`;
  // Whatever fails from here on must not leave the coordinator running on its own.
  process.on('exit', () => {
    if (coordinator.exitCode === null) coordinator.kill('SIGTERM');
  });
  await waitForHealth(`${url}/healthz`, coordinator);
  // Sent as it finishes starting, just after it first answers.
  const { stopDeadlineMs: coordinatorStopDeadlineMs, databaseUrl } = await Promise.race([
    ready,
    new Promise((resolve, reject) => {
      coordinator.once('exit', () => reject(new Error('the coordinator exited during start-up (see its log above)')));
      setTimeout(() => reject(new Error('the coordinator answered but never said it was ready')), 60_000).unref();
    }),
  ]);

  const secrets = JSON.parse(readFileSync(path.join(dataDir, 'secrets.json'), 'utf8'));
  const creds = localCredentials(databaseUrl);

  let stopping = false;
  let agent;
  const stop = async (code = 0) => {
    if (stopping) return;
    stopping = true;
    say('stopping');
    const exited = (p) => (p.exitCode !== null || p.signalCode !== null ? Promise.resolve() : new Promise((r) => p.once('exit', r)));
    await agent?.stop();
    // Postgres goes last: the coordinator stops it after its own pool and pg-boss are closed. No
    // SIGKILL here: that would leave its Postgres running; past its limit it exits by itself.
    coordinator.kill('SIGTERM');
    await Promise.race([exited(coordinator), new Promise((r) => setTimeout(r, stopLimitMs(coordinatorStopDeadlineMs)))]);
    process.exit(code);
  };

  // Restarted when it dies; given up on (and npm start with it) when it cannot start: agent-supervisor.mjs.
  agent = superviseAgent({
    args: entry('node-agent/src/main'),
    cwd: root,
    env: {
      ...process.env,
      COORDINATOR_GRPC: `127.0.0.1:${grpcPort}`,
      CLUSTER_TOKEN: process.env.CLUSTER_TOKEN ?? secrets.clusterToken,
      AGENT_NAME: process.env.AGENT_NAME ?? 'local-agent',
      AGENT_WORK_DIR: path.join(dataDir, 'agent-work'),
    },
    log: say,
    onGiveUp: (why) => {
      process.stderr.write(`[start] ${why}\n`);
      void stop(1);
    },
  });
  process.on('exit', () => agent.killNow());

  say('');
  say(`Video Shorts API:  ${url}   (docs ${url}/docs, metrics ${url}/metrics)`);
  say(`organization:      ${creds.organizationId}`);
  say(`API key:           ${creds.apiKey}`);
  say(`try: curl -H "Authorization: Bearer ${creds.apiKey}" ${url}/api/jobs`);
  say(`web studio:        ${studioSignIn(databaseUrl, creds)}`);
  say('                   (one-time sign-in link for local@localhost, valid 1 h, the longest a link may live; set a password with');
  say('                   npm run -s admin -- user set-password --email local@localhost)');
  say('Ctrl-C stops everything.');

  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => void stop(0));
  coordinator.on('exit', (code) => {
    if (!stopping) {
      say(`coordinator exited (${code})`);
      void stop(1);
    }
  });
}

main().catch((err) => {
  process.stderr.write(`[start] ${err.message}\n`);
  process.exit(1);
});
