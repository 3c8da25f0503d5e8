#!/usr/bin/env node
// `npm start`: the whole thing on one machine with no configuration — an embedded Postgres, local
// file storage, one coordinator and one agent. Prints the URL and an API key; Ctrl-C stops it all.
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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

function admin(args) {
  const out = execFileSync(process.execPath, [dist('coordinator/src/cli/admin.js'), ...args, '--json'], {
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

async function main() {
  mkdirSync(dataDir, { recursive: true });
  ensureSystemPackages();
  if (!existsSync(dist('coordinator/src/main.js')) || process.env.SKIP_BUILD !== "1") {
    say('building (tsc)');
    const build = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.json')], { stdio: 'inherit' });
    if (build.status !== 0 && !existsSync(dist('coordinator/src/main.js'))) throw new Error('build failed');
  }

  const env = { ...process.env, DATA_DIR: dataDir, PORT: String(port), GRPC_PORT: String(grpcPort) };
  // Own process groups: Ctrl-C reaches only this script, which then stops the agent, the
  // coordinator and its embedded Postgres in order instead of all at once.
  const coordinator = spawn(process.execPath, ['--enable-source-maps', dist('coordinator/src/main.js')], { env, stdio: 'inherit', detached: true });
  const url = `http://127.0.0.1:${port}`;
  // Whatever fails from here on must not leave the coordinator running on its own.
  process.on('exit', () => { if (coordinator.exitCode === null) coordinator.kill('SIGTERM'); });
  await waitForHealth(`${url}/healthz`, coordinator);

  const secrets = JSON.parse(readFileSync(path.join(dataDir, 'secrets.json'), 'utf8'));
  const creds = localCredentials();
  const agent = spawn(process.execPath, ['--enable-source-maps', dist('node-agent/src/main.js')], {
    env: {
      ...process.env,
      COORDINATOR_GRPC: `127.0.0.1:${grpcPort}`,
      CLUSTER_TOKEN: process.env.CLUSTER_TOKEN ?? secrets.clusterToken,
      AGENT_NAME: process.env.AGENT_NAME ?? 'local-agent',
      AGENT_WORK_DIR: path.join(dataDir, 'agent-work'),
    },
    stdio: 'inherit',
    detached: true,
  });
  process.on('exit', () => { if (agent.exitCode === null) agent.kill('SIGTERM'); });

  say('');
  say(`Video Shorts API:  ${url}   (docs ${url}/docs, metrics ${url}/metrics)`);
  say(`organization:      ${creds.organizationId}`);
  say(`API key:           ${creds.apiKey}`);
  say(`try: curl -H "Authorization: Bearer ${creds.apiKey}" ${url}/api/jobs`);
  say('Ctrl-C stops everything.');

  let stopping = false;
  const stop = async (code = 0) => {
    if (stopping) return;
    stopping = true;
    say('stopping');
    const exited = (p) => (p.exitCode !== null ? Promise.resolve() : new Promise((r) => p.once('exit', r)));
    agent.kill('SIGTERM');
    await Promise.race([exited(agent), new Promise((r) => setTimeout(r, 10_000))]);
    coordinator.kill('SIGTERM');
    await Promise.race([exited(coordinator), new Promise((r) => setTimeout(r, 15_000))]);
    process.exit(code);
  };
  process.on('SIGINT', () => stop(0));
  process.on('SIGTERM', () => stop(0));
  coordinator.on('exit', (code) => { if (!stopping) { say(`coordinator exited (${code})`); stop(1); } });
  agent.on('exit', (code) => { if (!stopping) say(`agent exited (${code}); the API keeps running`); });
}

main().catch((err) => {
  process.stderr.write(`[start] ${err.message}\n`);
  process.exit(1);
});
