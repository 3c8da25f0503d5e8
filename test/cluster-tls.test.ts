import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { makeTestVideo, serveFiles, type MediaServer } from './helpers/media.js';
import { CoordinatorClient } from '../node-agent/src/coordinator-client.js';
import { TEST_CLUSTER_TOKEN } from './helpers/cluster-token.js';

const run = promisify(execFile);

// The coordinator's gRPC port with TLS (GRPC_TLS_CERT/GRPC_TLS_KEY): an agent that trusts the
// certificate (GRPC_TLS_CA) works as usual; one that speaks plaintext or trusts another CA gets nowhere.
let cluster: TestCluster;
let media: MediaServer;
let certDir: string;

async function selfSignedCert(dir: string, name: string): Promise<{ cert: string; key: string }> {
  const cert = path.join(dir, `${name}.crt`);
  const key = path.join(dir, `${name}.key`);
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=localhost',
    '-addext',
    'subjectAltName=IP:127.0.0.1,DNS:localhost',
    '-keyout',
    key,
    '-out',
    cert,
  ]);
  return { cert, key };
}

test.before(async () => {
  certDir = await mkdtemp(path.join(os.tmpdir(), 'shorts-tls-'));
  const { cert, key } = await selfSignedCert(certDir, 'coordinator');
  await selfSignedCert(certDir, 'stranger');
  cluster = await startCluster('cluster_tls', { tlsCertPath: cert, tlsKeyPath: key });
  const video = await makeTestVideo(path.join(cluster.dataDir, 'clip.mp4'), { seconds: 2 });
  media = await serveFiles({ 'clip.mp4': video });
});

test.after.always(async () => {
  await media?.close();
  await cluster?.close();
  if (certDir) await rm(certDir, { recursive: true, force: true });
});

test.serial('an agent that trusts the coordinator certificate registers and runs a task over TLS', async (t) => {
  const agent = await cluster.startAgent({ GRPC_TLS_CA: path.join(certDir, 'coordinator.crt'), AGENT_TASK_TYPES: 'probe-media' });
  await agent.waitForLog(/"agent ready"/, 20_000);
  const { key } = await cluster.org();
  const created = await cluster.api('POST', '/api/probes', { key, body: { url: media.url('clip.mp4') } });
  t.is(created.status, 201);
  const probe = await waitFor(
    async () => {
      const r = await cluster.api('GET', `/api/probes/${created.body.id}`, { key });
      return r.body.state === 'completed' || r.body.state === 'failed' ? r.body : undefined;
    },
    60_000,
    'probe over TLS',
  );
  t.is(probe.state, 'completed', JSON.stringify(probe));
  t.true(Math.abs(probe.result.durationSec - 2) < 0.2);
  await agent.kill('SIGTERM');
});

const register = (client: CoordinatorClient) =>
  client.call(
    'RegisterAgent',
    { name: 'outsider', capabilities: { cpu_cores: 1, task_types: ['probe-media'], max_concurrent_tasks: 1 } },
    { retryForMs: 0, deadlineMs: 5000 },
  );

test.serial('a plaintext agent cannot talk to a TLS coordinator', async (t) => {
  const client = new CoordinatorClient(cluster.app.grpcAddress, TEST_CLUSTER_TOKEN);
  const err = await t.throwsAsync<Error & { code?: number }>(register(client));
  t.true(err?.code === 14 || err?.code === 4, `gRPC code ${err?.code}`); // UNAVAILABLE or DEADLINE_EXCEEDED
  client.close();
  t.false((await cluster.app.db.query(`SELECT 1 FROM agents WHERE name = 'outsider'`)).length > 0);
});

test.serial('an agent that trusts another certificate refuses the coordinator', async (t) => {
  const client = new CoordinatorClient(cluster.app.grpcAddress, TEST_CLUSTER_TOKEN, path.join(certDir, 'stranger.crt'));
  const err = await t.throwsAsync<Error & { code?: number }>(register(client));
  t.true(err?.code === 14 || err?.code === 4, `gRPC code ${err?.code}`);
  client.close();
  t.false((await cluster.app.db.query(`SELECT 1 FROM agents WHERE name = 'outsider'`)).length > 0);
});

test('plain-text gRPC only on loopback: anything else needs TLS or an explicit GRPC_INSECURE=1', async (t) => {
  const { loadConfig } = await import('../coordinator/src/config.js');
  const base = { databaseUrl: 'postgres://127.0.0.1/x' };
  t.is(loadConfig(base, {}).grpcHost, '127.0.0.1', 'without TLS the default is loopback');
  t.is(loadConfig(base, { GRPC_HOST: '::1' }).grpcHost, '::1');
  for (const host of ['0.0.0.0', '10.1.2.3', '::', 'shorts.example.com']) {
    const err = t.throws(() => loadConfig(base, { GRPC_HOST: host }), undefined, host);
    t.regex(err!.message, /plain text.*GRPC_TLS_CERT.*GRPC_INSECURE=1/, host);
  }
  t.is(loadConfig(base, { GRPC_HOST: '0.0.0.0', GRPC_INSECURE: '1' }).grpcHost, '0.0.0.0');
  t.throws(() => loadConfig(base, { GRPC_HOST: '0.0.0.0', GRPC_INSECURE: '0' }));
  const tls = { GRPC_TLS_CERT: path.join(certDir, 'coordinator.crt'), GRPC_TLS_KEY: path.join(certDir, 'coordinator.key') };
  t.is(loadConfig(base, tls).grpcHost, '0.0.0.0', 'with TLS the default is every interface');
  t.is(loadConfig(base, { ...tls, GRPC_HOST: '10.1.2.3' }).grpcHost, '10.1.2.3');
});
