#!/usr/bin/env node
// `npm start`: the whole thing on one machine with no configuration — an embedded Postgres, local
// file storage, one coordinator and one agent. Prints the URL and an API key; Ctrl-C stops it all.
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildStudio } from './build-studio.mjs';
import { linkCompiledCommon } from './link-common.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dataDir = path.resolve(process.env.DATA_DIR ?? path.join(root, 'data'));
const port = Number(process.env.PORT ?? 3000);
const grpcPort = Number(process.env.GRPC_PORT ?? 50051);
const dist = (p) => path.join(root, 'dist', p);
const say = (msg) => process.stdout.write(`[start] ${msg}\n`);

function haveCommand(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

// The agent's speech recognition and YouTube download come from the OS.
function ensureSystemPackages() {
  const missing = [];
  if (!haveCommand('pocketsphinx_continuous') || !existsSync('/usr/share/pocketsphinx/model/en-us/en-us')) missing.push('pocketsphinx', 'pocketsphinx-en-us');
  if (!haveCommand('yt-dlp')) missing.push('yt-dlp');
  if (!missing.length) return;
  const isRoot = process.getuid?.() === 0;
  if (haveCommand('apt-get') && (isRoot || haveCommand('sudo'))) {
    say(`installing ${missing.join(' ')} with apt-get`);
    const pre = isRoot ? [] : ['sudo'];
    const run = (args) => spawnSync(pre[0] ?? args[0], pre.length ? args : args.slice(1), { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    run(['apt-get', 'update', '-qq']);
    if (run(['apt-get', 'install', '-y', '-qq', ...missing]).status === 0) return;
  }
  say(`missing system packages: ${missing.join(', ')}. Install them (Debian/Ubuntu: apt-get install ${missing.join(' ')};` +
    ' macOS: brew install cmu-pocketsphinx yt-dlp) — the agent refuses video analysis without them.');
}

async function waitForHealth(url, child, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error('the coordinator exited during start-up (see its log above)');
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`the coordinator did not answer ${url}`);
}

// START_FROM_SOURCE=1 runs the TypeScript sources through tsx instead of building dist/ (tests, hacking).
const fromSource = process.env.START_FROM_SOURCE === '1';
const entry = (rel) => (fromSource
  ? ['--enable-source-maps', '--import', 'tsx', path.join(root, `${rel}.ts`)]
  : ['--enable-source-maps', dist(`${rel}.js`)]);

function admin(args) {
  const out = execFileSync(process.execPath, [...entry('coordinator/src/cli/admin'), ...args, '--json'], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    encoding: 'utf8',
  });
  return JSON.parse(out);
}

/** A local organization and one API key, made on the first start and kept under data/. */
function localCredentials() {
  const file = path.join(dataDir, 'local-credentials.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8'));
  const org = admin(['org', 'create', '--name', 'Local', '--plan', 'business', '--credits', '1000']);
  const key = admin(['key', 'issue', '--org', org.id, '--name', 'local']);
  const creds = { organizationId: org.id, apiKey: key.key };
  writeFileSync(file, JSON.stringify(creds, null, 2), { mode: 0o600 });
  return creds;
}

/** The web studio's local user (made once, owner of the local organization) and a fresh one-time sign-in link. */
function studioSignIn(creds) {
  const file = path.join(dataDir, 'local-credentials.json');
  if (!creds.userId) {
    creds.userId = admin(['user', 'create', '--email', 'local@localhost', '--name', 'Local user', '--org', creds.organizationId, '--role', 'owner']).id;
    writeFileSync(file, JSON.stringify(creds, null, 2), { mode: 0o600 });
  }
  return admin(['user', 'login-link', '--user', creds.userId, '--ttl', '3600']).url;
}

// An agent that dies (OOM killer, a crash in a native decoder) is started again, the way a service
// manager would: 1 s after the first exit, doubling up to 30 s while it keeps dying, back to 1 s
// once one has run for a minute. One that never gets as far as "ready" five times in a row cannot
// start on this host (no ffmpeg, bad configuration): restarting it forever would only hide that.
const RESTART_FIRST_DELAY_MS = 1_000;
const RESTART_MAX_DELAY_MS = 30_000;
const RESTART_STABLE_AFTER_MS = 60_000;
const START_FAILURES_BEFORE_GIVING_UP = 5;

// A stopping process hands its work back within its own limit (STOP_DEADLINE_MS in
// common/src/shutdown.ts), which it reports with "ready"; it exits by itself when that runs out. So
// SIGKILL comes only a little after that limit, for a process whose event loop is stuck. One that
// never said ready holds no work yet (an agent leases only after it), so it gets the short wait.
const STOP_GRACE_MS = 5_000;
const UNREADY_STOP_MS = 10_000;
const stopLimitMs = (reportedDeadlineMs) => (reportedDeadlineMs === undefined ? UNREADY_STOP_MS : reportedDeadlineMs + STOP_GRACE_MS);

/** Runs the agent and keeps it running; `stop()` ends it (SIGTERM, then SIGKILL past the agent's own stop limit). */
function superviseAgent(env, onGiveUp) {
  let child;
  let stopping = false;
  let restartTimer;
  let crashesInARow = 0;
  let startFailuresInARow = 0;
  let lastError;
  let stopDeadlineMs;

  const start = () => {
    restartTimer = undefined;
    const startedAt = Date.now();
    let readyAt;
    lastError = undefined;
    stopDeadlineMs = undefined;
    // The IPC channel carries "ready" or why start-up failed, and closes when this process dies
    // however it dies, which the agent takes as its cue to stop (common/src/shutdown.ts). Its log
    // goes straight to our stdout/stderr, so it still has somewhere to go after that.
    const proc = spawn(process.execPath, entry('node-agent/src/main'), { cwd: root, env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], detached: true });
    child = proc;
    say(`starting the agent (pid ${proc.pid})`);
    proc.on('message', (m) => {
      if (m?.type === 'ready') {
        readyAt = Date.now();
        if (Number.isFinite(m.stopDeadlineMs)) stopDeadlineMs = m.stopDeadlineMs;
      }
      if (m?.type === 'start-failed') lastError = m.message;
    });
    // 'exit' can come before the last message is read; the channel closes after it.
    const channelClosed = new Promise((r) => proc.once('disconnect', r));
    proc.on('exit', async (code, signal) => {
      if (stopping) return;
      await Promise.race([channelClosed, new Promise((r) => setTimeout(r, 1000))]);
      if (stopping) return;
      // What a dead agent started (ffmpeg, pocketsphinx) shares its process group: end it too, or
      // it keeps burning the cores its replacement needs.
      try { process.kill(-proc.pid, 'SIGKILL'); } catch { /* none left */ }
      const how = signal ? `killed by ${signal}` : `exit code ${code}`;
      if (readyAt === undefined) {
        startFailuresInARow += 1;
        if (startFailuresInARow >= START_FAILURES_BEFORE_GIVING_UP) {
          onGiveUp(`the agent failed at start-up ${startFailuresInARow} times in a row (${how}); its last error: ${lastError ?? 'none reported (see its log above)'}`);
          return;
        }
      } else {
        startFailuresInARow = 0;
        if (Date.now() - readyAt >= RESTART_STABLE_AFTER_MS) crashesInARow = 0;
      }
      crashesInARow += 1;
      const delay = Math.min(RESTART_FIRST_DELAY_MS * 2 ** (crashesInARow - 1), RESTART_MAX_DELAY_MS);
      const phase = readyAt === undefined ? `during start-up after ${((Date.now() - startedAt) / 1000).toFixed(1)} s` : 'while running';
      say(`agent exited ${phase} (${how}${lastError ? `; last error: ${lastError}` : ''}); restarting it in ${delay / 1000} s`);
      restartTimer = setTimeout(start, delay);
    });
  };
  start();

  return {
    get pid() { return child?.pid; },
    async stop() {
      stopping = true;
      clearTimeout(restartTimer);
      const proc = child;
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
      const limitMs = stopLimitMs(stopDeadlineMs);
      say(`stopping the agent (pid ${proc.pid}); it has up to ${limitMs / 1000} s to hand its work back`);
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      const timer = setTimeout(() => {
        say(`the agent did not stop within ${limitMs / 1000} s; killing it`);
        proc.kill('SIGKILL');
      }, limitMs);
      await exited;
      clearTimeout(timer);
      // Whatever it started and left behind (an ffmpeg mid-encode) goes with it.
      try { process.kill(-proc.pid, 'SIGKILL'); } catch { /* none left */ }
    },
    killNow() { if (child && child.exitCode === null) child.kill('SIGTERM'); },
  };
}

async function main() {
  mkdirSync(dataDir, { recursive: true });
  ensureSystemPackages();
  if (!fromSource && (!existsSync(dist('coordinator/src/main.js')) || process.env.SKIP_BUILD !== '1')) {
    say('building (tsc)');
    const build = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.json')], { stdio: 'inherit' });
    if (build.status !== 0 && !existsSync(dist('coordinator/src/main.js'))) throw new Error('build failed');
    linkCompiledCommon();
  }
  buildStudio({ log: say }); // the web studio at /studio/, rebuilt only when its sources changed

  const env = { ...process.env, DATA_DIR: dataDir, PORT: String(port), GRPC_PORT: String(grpcPort) };
  // Own process groups: Ctrl-C reaches only this script, which then stops the agent, the
  // coordinator and its embedded Postgres in order instead of all at once. The IPC channel makes
  // the coordinator stop (and stop its Postgres) when this script dies without a chance to.
  const coordinator = spawn(process.execPath, entry('coordinator/src/main'), { cwd: root, env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], detached: true });
  say(`starting the coordinator (pid ${coordinator.pid})`);
  let coordinatorStopDeadlineMs;
  coordinator.on('message', (m) => { if (m?.type === 'ready' && Number.isFinite(m.stopDeadlineMs)) coordinatorStopDeadlineMs = m.stopDeadlineMs; });
  const url = `http://127.0.0.1:${port}`;
  // Whatever fails from here on must not leave the coordinator running on its own.
  process.on('exit', () => { if (coordinator.exitCode === null) coordinator.kill('SIGTERM'); });
  await waitForHealth(`${url}/healthz`, coordinator);

  const secrets = JSON.parse(readFileSync(path.join(dataDir, 'secrets.json'), 'utf8'));
  const creds = localCredentials();

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

  agent = superviseAgent({
    ...process.env,
    COORDINATOR_GRPC: `127.0.0.1:${grpcPort}`,
    CLUSTER_TOKEN: process.env.CLUSTER_TOKEN ?? secrets.clusterToken,
    AGENT_NAME: process.env.AGENT_NAME ?? 'local-agent',
    AGENT_WORK_DIR: path.join(dataDir, 'agent-work'),
  }, (why) => {
    process.stderr.write(`[start] ${why}\n`);
    stop(1);
  });
  process.on('exit', () => agent.killNow());

  say('');
  say(`Video Shorts API:  ${url}   (docs ${url}/docs, metrics ${url}/metrics)`);
  say(`organization:      ${creds.organizationId}`);
  say(`API key:           ${creds.apiKey}`);
  say(`try: curl -H "Authorization: Bearer ${creds.apiKey}" ${url}/api/jobs`);
  say(`web studio:        ${studioSignIn(creds)}`);
  say('                   (one-time sign-in link for local@localhost, valid 1 h, the longest a link may live; set a password with');
  say('                   npm run -s admin -- user set-password --email local@localhost)');
  say('Ctrl-C stops everything.');

  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => stop(0));
  coordinator.on('exit', (code) => { if (!stopping) { say(`coordinator exited (${code})`); stop(1); } });
}

main().catch((err) => {
  process.stderr.write(`[start] ${err.message}\n`);
  process.exit(1);
});
