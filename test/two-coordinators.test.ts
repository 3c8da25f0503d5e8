import test from 'ava';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import PgBoss from 'pg-boss';
import { Db } from '../coordinator/src/db/db.js';
import { S3ObjectStore } from '../coordinator/src/storage/s3-store.js';
import { createUser, issueApiKey } from '../coordinator/src/tenancy/tenancy.js';
import { createLoginLink, setPassword } from '../coordinator/src/tenancy/sessions.js';
import { API_KEY_CACHE_MS } from '../coordinator/src/tenancy/tenancy.js';
import { UPLOAD_SWEEP_QUEUE } from '../coordinator/src/uploads/uploads.js';
import { createTestDatabase, dropTestDatabase } from './helpers/db.js';
import { callApi, orgWithKey, spawnAgent, spawnCoordinator, type LoggedProcess } from './helpers/fault-stack.js';
import { freePort } from './helpers/processes.js';
import { waitFor } from './helpers/cluster.js';
import { startBalancer, type Balancer } from './helpers/balancer.js';
import { makeTestVideo, serveFiles, type MediaServer } from './helpers/media.js';
import { startWebhookReceiver } from './helpers/webhook-receiver.js';
import { havePocketsphinx, needing } from './helpers/requirements.js';
import type { Parsed } from './helpers/parsed.js';

// Two coordinator processes on one Postgres and one S3-compatible store (s3rver), one agent, as a
// farm runs them behind a load balancer: the agent and the signed file URLs go through a failover
// balancer, and the test's own requests alternate between the coordinators. What one coordinator
// accepted, the other continues; killing one with SIGKILL loses nothing and charges nothing twice.

const SECRETS = {
  JWT_SECRET: 'two-coordinators-jwt-secret-0123456789abcdef',
  URL_SIGNING_SECRET: 'two-coordinators-url-secret-0123456789abcdef',
};
const FREE_FILES_PER_MINUTE = 12;

interface Node {
  name: string;
  url: string;
  port: number;
  grpcPort: number;
  proc?: LoggedProcess;
}

let databaseUrl: string;
let db: Db;
let s3: S3rver;
let s3Dir: string;
let store: S3ObjectStore;
let work: string;
let nodes: Node[];
let httpLb: Balancer;
let grpcLb: Balancer;
let agent: LoggedProcess;
let media: MediaServer;
let video: Buffer;
let hooks: Awaited<ReturnType<typeof startWebhookReceiver>>;
let coordinatorEnv: Record<string, string>;

async function startNode(node: Node): Promise<void> {
  node.proc = await spawnCoordinator(node.name, {
    ...coordinatorEnv,
    DATA_DIR: path.join(work, node.name),
    PORT: String(node.port),
    GRPC_PORT: String(node.grpcPort),
  });
}

test.before(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'shorts-two-coordinators-'));
  databaseUrl = await createTestDatabase('two_coordinators');
  db = new Db(databaseUrl, 4);
  s3Dir = path.join(work, 's3');
  await mkdir(s3Dir);
  s3 = new S3rver({ port: 0, address: '127.0.0.1', directory: s3Dir, silent: true, configureBuckets: [{ name: 'shorts' }] });
  const { port: s3Port } = await s3.run();
  const s3Config = {
    endpoint: `http://127.0.0.1:${s3Port}`,
    region: 'us-east-1',
    bucket: 'shorts',
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    forcePathStyle: true,
  };
  store = new S3ObjectStore(s3Config);

  nodes = [];
  for (const name of ['coordinator-a', 'coordinator-b']) {
    const port = await freePort();
    nodes.push({ name, port, url: `http://127.0.0.1:${port}`, grpcPort: await freePort() });
  }
  httpLb = await startBalancer(nodes.map((n) => ({ host: '127.0.0.1', port: n.port })));
  grpcLb = await startBalancer(nodes.map((n) => ({ host: '127.0.0.1', port: n.grpcPort })));
  coordinatorEnv = {
    ...SECRETS,
    DATABASE_URL: databaseUrl,
    PUBLIC_URL: `http://${httpLb.address}`,
    STORAGE: 's3',
    S3_ENDPOINT: s3Config.endpoint,
    S3_BUCKET: 'shorts',
    S3_ACCESS_KEY_ID: 'S3RVER',
    S3_SECRET_ACCESS_KEY: 'S3RVER',
    S3_FORCE_PATH_STYLE: 'true',
    UPLOAD_WRITER_LEASE_MS: '3000',
    WEBHOOK_RETRY_DELAY_SEC: '1',
    RATE_LIMIT_FILES_PER_MINUTE: `${FREE_FILES_PER_MINUTE},600,1200,3000`,
  };
  // One after the other: the first applies the migrations.
  for (const node of nodes) await startNode(node);

  agent = await spawnAgent('agent', grpcLb.address, path.join(work, 'agent'), { MAX_CONCURRENT_TASKS: '2' });

  const clip = await makeTestVideo(path.join(work, 'clip.mp4'), { seconds: 2, width: 160, height: 90 });
  video = await readFile(clip);
  // About 5 s to download: long enough to kill a coordinator while the analysis runs.
  media = await serveFiles({ 'clip.mp4': clip }, { bytesPerSec: Math.ceil(video.length / 5) });
  hooks = await startWebhookReceiver();
});

test.after.always(async () => {
  await agent?.kill('SIGKILL');
  for (const node of nodes ?? []) await node.proc?.kill('SIGKILL');
  await httpLb?.close();
  await grpcLb?.close();
  await media?.close();
  await hooks?.close();
  await s3?.close();
  await db?.close();
  if (databaseUrl) await dropTestDatabase(databaseUrl);
  if (work) await rm(work, { recursive: true, force: true });
});

const [A, B] = [0, 1];
let turn = 0;
/** Alternates between the two coordinators, as a round-robin balancer would. */
const next = () => nodes[turn++ % 2]!;

const call = (node: Node, key: string, method: string, urlPath: string, body?: unknown) => callApi(node.url, key, method, urlPath, body);

const newOrg = (plan: string, credits: number) => orgWithKey(db, `Two ${plan}`, plan, credits, 'two-coordinators');

const tus = (key: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${key}`, 'tus-resumable': '1.0.0', ...extra });
const meta = (o: Record<string, string>) =>
  Object.entries(o)
    .map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`)
    .join(',');

async function createUpload(
  node: Node,
  org: { id: string; key: string },
  length: number,
): Promise<{ status: number; location: string; body: Parsed }> {
  const res = await fetch(node.url + '/api/uploads/tus', {
    method: 'POST',
    headers: tus(org.key, {
      'upload-length': String(length),
      'upload-metadata': meta({ organizationId: org.id, filename: 'clip.mp4', filetype: 'video/mp4' }),
    }),
  });
  return { status: res.status, location: res.headers.get('location') ?? '', body: await res.json() };
}

function patch(node: Node, key: string, location: string, offset: number, chunk: Buffer | ReadableStream<Uint8Array>) {
  return fetch(node.url + location, {
    method: 'PATCH',
    headers: tus(key, { 'content-type': 'application/offset+octet-stream', 'upload-offset': String(offset) }),
    body: chunk instanceof Buffer ? new Uint8Array(chunk) : chunk,
    duplex: 'half',
  } as RequestInit);
}

const headOffset = async (node: Node, key: string, location: string) =>
  Number((await fetch(node.url + location, { method: 'HEAD', headers: tus(key) })).headers.get('upload-offset'));

async function partObjects(uploadId: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const o of store.list(`uploads/${uploadId}/`)) keys.push(o.key);
  return keys;
}

const count = async (sql: string, params: unknown[]) => Number((await db.one<{ n: string }>(sql, params))!.n);

test.serial('an upload started on A resumes on B; two final PATCHes at once make one file and one job', async (t) => {
  const org = await newOrg('pro', 10);
  const created = await createUpload(nodes[A]!, org, video.length);
  t.is(created.status, 201);
  const third = Math.floor(video.length / 3);
  t.is((await patch(nodes[A]!, org.key, created.location, 0, video.subarray(0, third))).status, 204);
  // B knows where the upload stands and takes the next bytes: the first part is in the shared store.
  t.is(await headOffset(nodes[B]!, org.key, created.location), third);
  t.is((await patch(nodes[B]!, org.key, created.location, third, video.subarray(third, 2 * third))).status, 204);
  t.is(await headOffset(nodes[A]!, org.key, created.location), 2 * third);
  t.is((await partObjects(created.body.id)).length, 2);

  const [onA, onB] = await Promise.all(
    [A, B].map((i) => patch(nodes[i]!, org.key, created.location, 2 * third, video.subarray(2 * third))),
  );
  const statuses = [onA!.status, onB!.status].sort();
  t.deepEqual(statuses, [204, 409], 'one PATCH finishes the upload, the other is refused');
  const winner = onA!.status === 204 ? onA! : onB!;
  const jobId = winner.headers.get('upload-job-id');
  t.truthy(jobId);
  t.is(await count(`SELECT count(*) AS n FROM files WHERE organization_id = $1 AND 'upload' = ANY(tags)`, [org.id]), 1);
  t.is(await count(`SELECT count(*) AS n FROM jobs WHERE organization_id = $1`, [org.id]), 1);
  // The file holds exactly the bytes sent, joined in order, and the parts are gone.
  const file = await db.one<{ key: string; size: string }>(
    `SELECT object_key AS key, size_bytes AS size FROM files WHERE organization_id = $1`,
    [org.id],
  );
  t.is(Number(file!.size), video.length);
  const chunks: Buffer[] = [];
  for await (const c of (await store.get(file!.key)).stream) chunks.push(c as Buffer);
  t.true(Buffer.concat(chunks).equals(video));
  t.deepEqual(await partObjects(created.body.id), []);
  // The job is visible through either coordinator.
  for (const node of nodes) t.is((await call(node, org.key, 'GET', `/api/jobs/${jobId}`)).body.source, 'WEB_APP');
});

// The agent takes analysis only with its transcriber installed.
needing({ tools: { pocketsphinx: havePocketsphinx } }).serial(
  'A killed with SIGKILL mid-upload and mid-job: B carries on, nothing lost, nothing charged twice',
  async (t) => {
    const org = await newOrg('pro', 10);
    const job = await call(nodes[A]!, org.key, 'POST', '/api/jobs', {
      functionName: 'VideoShorts',
      fileUrl: media.url('clip.mp4'),
      webhook: hooks.url('/two'),
      options: { predefinedShorts: [{ title: 'All', start: 0, end: 2 }] },
    });
    t.is(job.status, 201, JSON.stringify(job.body));
    // Submitted on A, seen on B.
    t.is((await call(nodes[B]!, org.key, 'GET', `/api/jobs/${job.body.id}`)).body.status, 'PROCESSING');

    // An upload with its first half accepted by A, and a PATCH streaming into A when it dies.
    const created = await createUpload(nodes[A]!, org, video.length);
    const half = Math.floor(video.length / 2);
    t.is((await patch(nodes[A]!, org.key, created.location, 0, video.subarray(0, half))).status, 204);
    let feed!: ReadableStreamDefaultController<Uint8Array>;
    const stalled = patch(
      nodes[A]!,
      org.key,
      created.location,
      half,
      new ReadableStream({
        start(c) {
          feed = c;
        },
      }),
    ).catch((err) => err);
    feed.enqueue(new Uint8Array(video.subarray(half, half + 1000)));

    await waitFor(
      async () =>
        (await count(`SELECT count(*) AS n FROM tasks WHERE organization_id = $1 AND state = 'leased' AND progress > 0`, [org.id])) > 0,
      60_000,
      'the analysis under way',
    );
    await nodes[A]!.proc!.kill('SIGKILL');
    t.true((await stalled) instanceof Error, 'the PATCH into A broke off');

    // What A accepted is kept; what it had not accepted is sent again through B.
    t.is(await headOffset(nodes[B]!, org.key, created.location), half);
    const resumed = await waitFor(
      async () => {
        const res = await patch(nodes[B]!, org.key, created.location, half, video.subarray(half));
        return res.status === 409 ? undefined : res; // A's writer lease runs out within UPLOAD_WRITER_LEASE_MS
      },
      20_000,
      'B to take over the upload',
    );
    t.is(resumed.status, 204, await resumed.clone().text());
    t.truthy(resumed.headers.get('upload-job-id'));

    // The job ends through B, once, its webhook delivered once.
    const done = await waitFor(
      async () => {
        const r = await call(nodes[B]!, org.key, 'GET', `/api/jobs/${job.body.id}`);
        return r.body.status === 'COMPLETED' || r.body.status === 'FAILED' ? r.body : undefined;
      },
      180_000,
      'the job to end',
    );
    t.is(done.status, 'COMPLETED', done.message);
    await waitFor(
      async () => (await count(`SELECT count(*) AS n FROM jobs WHERE organization_id = $1 AND status = 'PROCESSING'`, [org.id])) === 0,
      180_000,
      "the uploaded video's job to end",
    );
    const jobs = await db.query<{ id: string; status: string; cost: number | null }>(
      `SELECT id, status, cost::float AS cost FROM jobs WHERE organization_id = $1`,
      [org.id],
    );
    t.is(jobs.length, 2);
    const charges = await db.query<{ jobId: string; amount: number }>(
      `SELECT job_id AS "jobId", amount::float AS amount FROM credit_ledger WHERE organization_id = $1 AND kind = 'charge'`,
      [org.id],
    );
    const completed = jobs.filter((j) => j.status === 'COMPLETED');
    t.deepEqual(
      charges.map((c) => [c.jobId, c.amount]).sort(),
      completed.map((j) => [j.id, -Number(j.cost)]).sort(),
      'one charge per completed job',
    );
    const orgRow = (await db.one<{ credits: number; reserved: number }>(
      `SELECT credits::float AS credits, reserved_credits::float AS reserved FROM organizations WHERE id = $1`,
      [org.id],
    ))!;
    t.is(Math.round(orgRow.credits * 100), Math.round((10 - completed.reduce((n, j) => n + Number(j.cost), 0)) * 100));
    t.is(orgRow.reserved, 0);
    await waitFor(async () => hooks.received.some((h) => h.body.includes(job.body.id)), 30_000, 'the webhook');
    await new Promise((r) => setTimeout(r, 1500));
    t.is(hooks.received.filter((h) => h.body.includes(job.body.id)).length, 1, 'one webhook delivery');

    await startNode(nodes[A]!);
  },
);

test.serial('the rate limit counts requests through both coordinators together', async (t) => {
  const org = await newOrg('free', 10);
  const statuses: number[] = [];
  for (let i = 0; i < FREE_FILES_PER_MINUTE + 2; i++) statuses.push((await call(next(), org.key, 'GET', '/api/uploads/files')).status);
  t.deepEqual(statuses, [...Array(FREE_FILES_PER_MINUTE).fill(200), 429, 429]);
});

test.serial(
  'a session made on A works on B; signed out on A, B refuses it; a sign-in link used on A is refused on B; a revoked key stops on both',
  async (t) => {
    const org = await newOrg('pro', 10);
    const email = `two-${Date.now()}@farm.test`;
    const user = await createUser(db, { email, organizationId: org.id, role: 'owner' });
    await setPassword(db, user.id, 'correct horse battery');
    const signIn = (node: Node, body: unknown) =>
      fetch(node.url + '/api/session', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const res = await signIn(nodes[A]!, { email, password: 'correct horse battery' });
    t.is(res.status, 200);
    const csrf = ((await res.json()) as { csrfToken: string }).csrfToken;
    const cookie = res.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    t.is((await fetch(nodes[B]!.url + `/api/jobs?organizationId=${org.id}`, { headers: { cookie } })).status, 200);
    t.is((await fetch(nodes[A]!.url + '/api/session', { method: 'DELETE', headers: { cookie, 'x-csrf-token': csrf } })).status, 200);
    t.is((await fetch(nodes[B]!.url + '/api/session', { headers: { cookie } })).status, 401);
    t.is((await fetch(nodes[B]!.url + `/api/jobs?organizationId=${org.id}`, { headers: { cookie } })).status, 401);

    const link = await createLoginLink(db, user.id);
    t.is((await signIn(nodes[A]!, { token: link })).status, 200);
    t.is((await signIn(nodes[B]!, { token: link })).status, 401);

    // Both coordinators have the key in their cache; the admin CLI revokes it in the database.
    const key = await issueApiKey(db, org.id, 'soon revoked');
    for (const node of nodes) t.is((await call(node, key.key, 'GET', '/api/jobs')).status, 200);
    await db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [key.id]);
    const revokedAt = Date.now();
    for (const node of nodes)
      await waitFor(
        async () => (await call(node, key.key, 'GET', '/api/jobs')).status === 401,
        API_KEY_CACHE_MS + 3_000,
        `${node.name} to refuse the key`,
      );
    t.true(Date.now() - revokedAt <= API_KEY_CACHE_MS + 1_000, 'within the key cache time');
  },
);

test.serial(
  "the scheduled sweep removes an abandoned upload's bytes, releases its storage, and finishes an upload whose finisher died",
  async (t) => {
    const org = await newOrg('free', 10);
    // 60 MB of the free plan's 100 MB held by an upload that will never finish.
    const abandoned = await createUpload(nodes[A]!, org, 60_000_000);
    t.is(abandoned.status, 201);
    t.is((await patch(nodes[B]!, org.key, abandoned.location, 0, video)).status, 204);
    t.is((await partObjects(abandoned.body.id)).length, 1);
    t.is((await createUpload(nodes[B]!, org, 60_000_000)).status, 403);

    // And an upload whose last bytes were accepted when its coordinator died before making the job:
    // what a SIGKILL between the last part and the job leaves (the part stored and counted, the
    // writer's lease run out).
    const pro = await newOrg('pro', 10);
    const orphaned = await createUpload(nodes[A]!, pro, video.length);
    const half = Math.floor(video.length / 2);
    t.is((await patch(nodes[A]!, pro.key, orphaned.location, 0, video.subarray(0, half))).status, 204);
    const lastKey = `uploads/${orphaned.body.id}/${String(half).padStart(15, '0')}-dead-writer`;
    await store.put(lastKey, video.subarray(half));
    await db.tx(async (c) => {
      await c.query(
        `UPDATE uploads SET offset_bytes = length_bytes, writer_token = 'dead-writer', writer_until = now() - interval '1 second' WHERE id = $1`,
        [orphaned.body.id],
      );
      await c.query(`INSERT INTO upload_parts (upload_id, offset_bytes, size_bytes, object_key) VALUES ($1, $2, $3, $4)`, [
        orphaned.body.id,
        half,
        video.length - half,
        lastKey,
      ]);
    });

    // A day of silence, then one sweep: pg-boss gives it to one of the two coordinators.
    await db.query(`UPDATE uploads SET updated_at = now() - interval '25 hours' WHERE id = $1`, [abandoned.body.id]);
    const boss = new PgBoss({ connectionString: databaseUrl, schema: 'pgboss', supervise: false, schedule: false, migrate: false });
    await boss.start();
    try {
      await boss.send(UPLOAD_SWEEP_QUEUE, {});
    } finally {
      await boss.stop({ graceful: false, wait: true, close: true });
    }
    // The sweep logs once it has removed the bytes as well.
    const sweptBy = () =>
      nodes.flatMap((n) => n.proc!.logs).filter((l) => l.includes('"msg":"abandoned uploads expired"') && l.includes(abandoned.body.id));
    await waitFor(async () => sweptBy().length > 0, 30_000, 'the sweep');
    const row = (await db.one<{ state: string; message: string }>(`SELECT state, error_message AS message FROM uploads WHERE id = $1`, [
      abandoned.body.id,
    ]))!;
    t.is(row.state, 'failed');
    t.regex(row.message, /expired/);
    t.deepEqual(await partObjects(abandoned.body.id), []);
    t.is(await count(`SELECT count(*) AS n FROM upload_parts WHERE upload_id = $1`, [abandoned.body.id]), 0);
    t.is(sweptBy().length, 1, 'one coordinator ran the sweep');
    // Its 60 MB are free again.
    t.is((await createUpload(nodes[B]!, org, 60_000_000)).status, 201);

    // The upload whose finisher died became its one file and one job.
    const finished = await waitFor(
      async () => {
        const r = await db.one<{ state: string; jobId: string | null; fileId: string | null }>(
          `SELECT state, job_id AS "jobId", file_id AS "fileId" FROM uploads WHERE id = $1`,
          [orphaned.body.id],
        );
        return r?.state === 'completed' ? r : undefined;
      },
      30_000,
      'the sweep to finish the upload',
    );
    t.truthy(finished.jobId);
    t.is(await count(`SELECT count(*) AS n FROM jobs WHERE organization_id = $1`, [pro.id]), 1);
    t.is(await count(`SELECT sum(size_bytes) AS n FROM files WHERE organization_id = $1 AND 'upload' = ANY(tags)`, [pro.id]), video.length);
    // Its parts go once the job is committed, so a moment after the state reads 'completed' (and
    // later still when the cron's own sweep on the other coordinator was the one that finished it).
    await waitFor(
      async () => (await partObjects(orphaned.body.id)).length === 0,
      30_000,
      "the finished upload's parts to be removed",
    ).catch((err: Error) => {
      const said = nodes.flatMap((n) => n.proc!.logs.map((l) => `${n.name}: ${l}`)).filter((l) => l.includes(orphaned.body.id));
      throw new Error(`${err.message}; what the coordinators logged about it:\n${said.join('\n')}`);
    });
    t.is(await count(`SELECT count(*) AS n FROM upload_parts WHERE upload_id = $1`, [orphaned.body.id]), 0);
  },
);
