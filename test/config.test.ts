import test from 'ava';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from '@shorts/common/paths';
import { readEnvFile } from './helpers/compose.js';
import { freePort } from './helpers/processes.js';
import { loadConfig } from '../coordinator/src/config.js';
import { loadAgentConfig } from '../node-agent/src/config.js';

// Each process reads its configuration once, at start, into one frozen object that is passed down.

test('the coordinator config carries social posting, read with the rest and frozen all the way down', (t) => {
  const config = loadConfig(
    { grpcHost: '127.0.0.1' },
    {
      SOCIAL_PROVIDER: 'ayrshare',
      SOCIAL_API_KEY: 'k',
      SOCIAL_AYRSHARE_DOMAIN: 'acme',
      SOCIAL_AYRSHARE_PRIVATE_KEY: 'pem',
      LOG_LEVEL: 'warn',
    },
  );
  t.like(config.social, { provider: 'ayrshare', apiKey: 'k', domain: 'acme' });
  t.is(config.logLevel, 'warn');
  t.true(Object.isFrozen(config) && Object.isFrozen(config.social));
  t.throws(() => loadConfig({ grpcHost: '127.0.0.1' }, { SOCIAL_PROVIDER: 'ayrshare' }), { message: /SOCIAL_API_KEY is required/ });
  t.is(loadConfig({ grpcHost: '127.0.0.1' }, {}).social.provider, 'local');
});

test('the agent config carries the transcriber and highlight-model settings, frozen', (t) => {
  const env = {
    CLUSTER_TOKEN: 'a-cluster-token-0123456789',
    TRANSCRIBE_API_URL: 'http://127.0.0.1:9',
    TRANSCRIBE_CONCURRENCY: '3',
    HIGHLIGHT_API_URL: 'http://127.0.0.1:8',
    HIGHLIGHT_API_MODEL: 'm',
  };
  const config = loadAgentConfig(env);
  t.like(config.transcriber, { apiUrl: 'http://127.0.0.1:9', concurrency: 3 });
  t.deepEqual(config.highlightApi, { url: 'http://127.0.0.1:8', model: 'm', apiKey: undefined });
  t.true(Object.isFrozen(config) && Object.isFrozen(config.transcriber) && Object.isFrozen(config.highlightApi));
  t.is(loadAgentConfig({ CLUSTER_TOKEN: env.CLUSTER_TOKEN }).highlightApi, null);
});

// The examples' placeholder secrets (deploy/farm.env.example, deploy/k8s/secrets.yaml), by variable.
function examplePlaceholders(): Array<[string, string]> {
  const farm = readEnvFile(path.join(repoRoot(), 'deploy/farm.env.example'));
  const k8s = parseAllDocuments(readFileSync(path.join(repoRoot(), 'deploy/k8s/secrets.yaml'), 'utf8')).map((d) => d.toJS());
  const coordinatorVars = ['CLUSTER_TOKEN', 'JWT_SECRET', 'URL_SIGNING_SECRET', 'DATABASE_URL', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'];
  return [
    ...coordinatorVars.filter((k) => k in farm).map((k): [string, string] => [k, farm[k]!]),
    // compose builds the coordinator's DATABASE_URL from POSTGRES_PASSWORD.
    ['DATABASE_URL', `postgres://shorts:${farm.POSTGRES_PASSWORD}@postgres:5432/shorts`],
    ...k8s.flatMap((s) => Object.entries<string>(s.stringData ?? {}).filter(([k]) => coordinatorVars.includes(k))),
  ];
}

const realSecrets = () => ({
  CLUSTER_TOKEN: randomBytes(32).toString('hex'),
  JWT_SECRET: randomBytes(32).toString('hex'),
  URL_SIGNING_SECRET: randomBytes(32).toString('hex'),
  DATABASE_URL: `postgres://shorts:${randomBytes(16).toString('hex')}@127.0.0.1:5432/shorts`,
  S3_ACCESS_KEY_ID: 'AKIA0123456789',
  S3_SECRET_ACCESS_KEY: randomBytes(20).toString('hex'),
});

test('the coordinator refuses every secret the examples ship as a placeholder, naming the variable', (t) => {
  const real = realSecrets();
  t.notThrows(() => loadConfig({ grpcHost: '127.0.0.1' }, real));
  const placeholders = examplePlaceholders();
  // Both examples, every coordinator secret in them: CLUSTER_TOKEN, JWT_SECRET, URL_SIGNING_SECRET twice, DATABASE_URL twice, S3 keys.
  t.true(placeholders.length >= 9, placeholders.map(([k]) => k).join(', '));
  for (const [name, value] of placeholders) {
    t.throws(
      () => loadConfig({ grpcHost: '127.0.0.1' }, { ...real, [name]: value }),
      { message: new RegExp(`${name}[^;]*placeholder`) },
      `${name}=${value}`,
    );
  }
});

test('a coordinator started with a placeholder secret exits before it opens a port or the database', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'config-placeholder-'));
  try {
    const [, jwtPlaceholder] = examplePlaceholders().find(([k]) => k === 'JWT_SECRET')!;
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot(), 'coordinator/src/main.ts')], {
      // A database nobody serves: were the placeholder let through, start-up would fail there instead.
      env: {
        PATH: process.env.PATH,
        ...realSecrets(),
        JWT_SECRET: jwtPlaceholder,
        DATABASE_URL: `postgres://shorts:${randomBytes(8).toString('hex')}@127.0.0.1:${await freePort()}/shorts`,
        PORT: '0',
        GRPC_PORT: '0',
        DATA_DIR: dataDir,
        TIMERS: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (b) => (output += b));
    child.stderr.on('data', (b) => (output += b));
    const [code] = await once(child, 'exit');
    t.is(code, 1, output);
    t.regex(output, /invalid configuration.*JWT_SECRET[^;]*placeholder/);
    t.notRegex(output, /listening|migrat/i);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('on/off variables parse strictly in both processes: no/false/0/off are off, yes/true/1/on are on, anything else stops the start', (t) => {
  const base = { grpcHost: '127.0.0.1' };
  for (const word of ['no', 'false', '0', 'off', 'NO', ' Off ']) {
    t.false(loadConfig(base, { TIMERS: word, S3_FORCE_PATH_STYLE: word, GRPC_INSECURE: word }).timers, word);
    t.throws(
      () => loadConfig({}, { GRPC_HOST: '0.0.0.0', GRPC_INSECURE: word }),
      { message: /plain text/ },
      `GRPC_INSECURE=${word} keeps plain text off`,
    );
    t.like(loadConfig(base, { SOCIAL_LOCAL_AUTO_LINK: word }).social, { provider: 'local', autoLink: false }, word);
  }
  for (const word of ['yes', 'true', '1', 'on', 'TRUE']) {
    const c = loadConfig({}, { TIMERS: word, GRPC_HOST: '0.0.0.0', GRPC_INSECURE: word, SOCIAL_LOCAL_AUTO_LINK: word });
    t.true(c.timers && c.grpcInsecure, word);
    t.like(c.social, { provider: 'local', autoLink: true });
  }
  for (const [name, word] of [
    ['GRPC_INSECURE', 'nope'],
    ['TIMERS', 'disabled'],
    ['S3_FORCE_PATH_STYLE', '2'],
    ['SOCIAL_LOCAL_AUTO_LINK', 'y'],
  ]) {
    t.throws(
      () => loadConfig(base, { [name]: word }),
      { message: new RegExp(`${name}: expected yes/true/1/on or no/false/0/off, got "${word}"`) },
      name,
    );
  }

  const token = 'a-cluster-token-0123456789';
  t.true(loadAgentConfig({ CLUSTER_TOKEN: token, COORDINATOR_GRPC: 'coordinator:50051', GRPC_INSECURE: 'yes' }).grpcInsecure);
  t.throws(() => loadAgentConfig({ CLUSTER_TOKEN: token, GRPC_INSECURE: 'maybe' }), {
    message: /GRPC_INSECURE: expected yes\/true\/1\/on or no\/false\/0\/off, got "maybe"/,
  });
});

test('an agent refuses plain-text gRPC to a coordinator off its host unless GRPC_INSECURE or GRPC_TLS_CA says otherwise', (t) => {
  const token = 'a-cluster-token-0123456789';
  for (const coordinator of ['coordinator:50051', '10.0.0.5:50051', 'dns:///shorts.example.com:50051', '[2001:db8::1]:50051']) {
    t.throws(
      () => loadAgentConfig({ CLUSTER_TOKEN: token, COORDINATOR_GRPC: coordinator }),
      { message: /refusing plain-text gRPC to .*GRPC_TLS_CA.*GRPC_INSECURE=1/ },
      coordinator,
    );
    t.throws(
      () => loadAgentConfig({ CLUSTER_TOKEN: token, COORDINATOR_GRPC: coordinator, GRPC_INSECURE: 'no' }),
      undefined,
      `${coordinator} with GRPC_INSECURE=no`,
    );
    t.is(loadAgentConfig({ CLUSTER_TOKEN: token, COORDINATOR_GRPC: coordinator, GRPC_INSECURE: '1' }).coordinator, coordinator);
    t.is(
      loadAgentConfig({ CLUSTER_TOKEN: token, COORDINATOR_GRPC: coordinator, GRPC_TLS_CA: '/etc/shorts/ca.crt' }).coordinator,
      coordinator,
    );
  }
  for (const coordinator of ['127.0.0.1:50051', 'localhost:50051', '[::1]:50051', '127.0.0.2:9']) {
    t.is(loadAgentConfig({ CLUSTER_TOKEN: token, COORDINATOR_GRPC: coordinator }).coordinator, coordinator);
  }
  t.is(loadAgentConfig({ CLUSTER_TOKEN: token }).coordinator, '127.0.0.1:50051', 'the one-machine default needs nothing');
});
