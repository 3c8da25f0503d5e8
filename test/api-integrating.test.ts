// Issue 37: Idempotency-Key, request ids, error codes and CORS, through the public HTTP API.
import { createHash } from 'node:crypto';
import test from 'ava';
import { createLogger } from '@shorts/common/logger';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { loadConfig } from '../coordinator/src/config.js';
import { canonicalJson, IdempotencyKeys } from '../coordinator/src/api/idempotency.js';
import type { Parsed } from './helpers/parsed.js';

const ALLOWED_ORIGIN = 'https://app.example.com';
let cluster: TestCluster;
// The coordinator logs with the project's JSON logger at info, to this worker's stdout: its lines
// are kept here, not printed, so a test can look for its request's lines; anything else is written.
const stdoutLines: string[] = [];
const realWrite = process.stdout.write.bind(process.stdout);

test.before(async () => {
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = String(chunk);
    if (text.startsWith('{"time":')) {
      stdoutLines.push(...text.split('\n').filter(Boolean));
      return true;
    }
    return (realWrite as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
  cluster = await startCluster(
    'api_integrating',
    { corsOrigins: ALLOWED_ORIGIN },
    { log: createLogger({ service: 'coordinator' }, 'info') },
  );
});
test.after.always(async () => {
  await cluster?.close();
  process.stdout.write = realWrite;
});

const JOB = { functionName: 'VideoShorts', fileUrl: 'https://videos.example.com/talk.mp4' };

async function jobCount(orgId: string): Promise<number> {
  return (await cluster.app.db.one<{ n: number }>('SELECT count(*)::int AS n FROM jobs WHERE organization_id = $1', [orgId]))!.n;
}
async function reserved(orgId: string): Promise<number> {
  return Number((await cluster.app.db.one<{ r: string }>('SELECT reserved_credits AS r FROM organizations WHERE id = $1', [orgId]))!.r);
}
const postJob = (key: string, idempotencyKey: string, body: unknown = JOB, headers: Record<string, string> = {}) =>
  cluster.api('POST', '/api/jobs', { key, body, headers: { 'idempotency-key': idempotencyKey, ...headers } });

test('a retried POST /api/jobs with the same Idempotency-Key answers the first response and charges once', async (t) => {
  const { org, key } = await cluster.org({ credits: 5 });
  const first = await postJob(key, 'retry-1');
  t.is(first.status, 201, JSON.stringify(first.body));
  t.is(first.headers.get('idempotent-replayed'), null);
  const reservedOnce = await reserved(org.id);
  t.true(reservedOnce > 0);

  // Keys in another order are the same body.
  const again = await postJob(key, 'retry-1', { fileUrl: JOB.fileUrl, functionName: JOB.functionName });
  t.is(again.status, 201);
  t.deepEqual(again.body, first.body);
  t.is(again.headers.get('idempotent-replayed'), 'true');
  t.is(await jobCount(org.id), 1);
  t.is(await reserved(org.id), reservedOnce);

  // Without a key, or with a new one, a POST is a new job as before.
  const fresh = await postJob(key, 'retry-2');
  t.is(fresh.status, 201);
  t.not(fresh.body.id, first.body.id);
  t.is(await jobCount(org.id), 2);
});

test('the same Idempotency-Key with another body is 422 idempotency_key_reused and does nothing', async (t) => {
  const { org, key } = await cluster.org({ credits: 5 });
  t.is((await postJob(key, 'reused')).status, 201);
  const other = await postJob(key, 'reused', { ...JOB, name: 'Another title' });
  t.is(other.status, 422);
  t.like(other.body, { code: 'idempotency_key_reused' });
  t.is(typeof other.body.error, 'string');
  t.regex(other.body.message, /Idempotency-Key/);
  // The same key on another creating route is another request too.
  const retryRoute = await cluster.api('POST', `/api/jobs/${(await postJob(key, 'reused')).body.id}/retry`, {
    key,
    body: {},
    headers: { 'idempotency-key': 'reused' },
  });
  t.is(retryRoute.status, 422);
  t.is(await jobCount(org.id), 1);
});

test('Idempotency-Keys are per organization: another organization with the same key gets its own job', async (t) => {
  const a = await cluster.org({ credits: 5 });
  const b = await cluster.org({ credits: 5 });
  const fromA = await postJob(a.key, 'shared-key');
  const fromB = await postJob(b.key, 'shared-key');
  t.is(fromA.status, 201);
  t.is(fromB.status, 201);
  t.not(fromB.body.id, fromA.body.id);
  const retriedB = await postJob(b.key, 'shared-key');
  t.deepEqual(retriedB.body, fromB.body);
  t.is(retriedB.headers.get('idempotent-replayed'), 'true');
  t.is(await jobCount(a.org.id), 1);
  t.is(await jobCount(b.org.id), 1);
});

test('concurrent requests with one key make one job: the others get 409 while it runs, or its answer', async (t) => {
  const { org, key } = await cluster.org({ credits: 5 });
  const answers = await Promise.all(Array.from({ length: 6 }, () => postJob(key, 'racing')));
  const created = answers.filter((r) => r.status === 201);
  t.true(created.length >= 1);
  for (const r of answers) {
    t.true(r.status === 201 || r.status === 409, `${r.status} ${JSON.stringify(r.body)}`);
    if (r.status === 409) t.like(r.body, { error: 'Conflict', code: 'idempotency_key_in_flight' });
    else t.deepEqual(r.body, created[0]!.body);
  }
  t.is(await jobCount(org.id), 1);
});

test('a refused request does not take the key: a 400 before any work, then the corrected body, creates the job', async (t) => {
  const { org, key } = await cluster.org({ credits: 5 });
  const bad = await postJob(key, 'fix-me', { functionName: 'VideoShorts' });
  t.is(bad.status, 400);
  t.is(bad.body.code, 'invalid_input');
  const fixed = await postJob(key, 'fix-me');
  t.is(fixed.status, 201);
  t.is(await jobCount(org.id), 1);
  for (const unusable of ['has space', 'k'.repeat(256), 'clé']) {
    const badKey = await postJob(key, unusable);
    t.is(badKey.status, 400, unusable);
    t.is(badKey.body.code, 'idempotency_key_invalid', unusable);
  }
  t.is(await jobCount(org.id), 1);
});

test("a 4xx that changed nothing is replayed like a success; its request id is the retry's own", async (t) => {
  const { key } = await cluster.org({ credits: 5 });
  const unknownJob = '01a20000-0000-7000-8000-000000000000';
  const retry = (requestId: string) =>
    cluster.api('POST', `/api/jobs/${unknownJob}/retry`, {
      key,
      body: {},
      headers: { 'idempotency-key': 'gone-job', 'x-request-id': requestId },
    });
  const first = await retry('first-try');
  t.is(first.status, 404);
  t.is(first.headers.get('idempotent-replayed'), null);
  const second = await retry('second-try');
  t.is(second.status, 404);
  t.is(second.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(second.body, { ...first.body, requestId: 'second-try' });
});

test('the X-Request-Id sent is echoed in the header and the error body; error bodies keep error and message and gain code', async (t) => {
  const { key } = await cluster.org();
  const r = await cluster.api('GET', '/api/jobs/01a20000-0000-7000-8000-000000000000', {
    key,
    headers: { 'x-request-id': 'client-req-42' },
  });
  t.is(r.status, 404);
  t.is(r.headers.get('x-request-id'), 'client-req-42');
  t.deepEqual(r.body, { error: 'Not Found', message: 'Job not found', code: 'not_found', requestId: 'client-req-42' });

  const unauthorized = await cluster.api('GET', '/api/jobs', { headers: { 'x-request-id': 'client-req-43' } });
  t.deepEqual(unauthorized.body, { error: 'Unauthorized', message: 'Unauthorized', code: 'unauthorized', requestId: 'client-req-43' });

  const noRoute = await cluster.api('GET', '/api/no-such-route', { key });
  t.like(noRoute.body, { error: 'Not Found', code: 'not_found' });
  const badMethod = await cluster.api('PATCH', '/api/jobs', { key });
  t.is(badMethod.status, 405);
  t.is(badMethod.body.code, 'method_not_allowed');
  const badLimit = await cluster.api('GET', '/api/jobs?limit=0', { key });
  t.like(badLimit.body, { error: 'Bad Request', message: 'Limit must be between 1 and 100', code: 'invalid_input' });
  const overPlan = await cluster.api('POST', '/api/organizations/social-posts/publish', {
    key: (await cluster.org({ plan: 'free' })).key,
    body: {},
  });
  t.is(overPlan.status, 403);
  t.is(overPlan.body.code, 'over_plan_limit');
});

test('a request id is made when none is sent, or when the one sent is unusable', async (t) => {
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
  const none = await cluster.api('GET', '/api/jobs');
  t.regex(none.headers.get('x-request-id') ?? '', uuid);
  t.is(none.body.requestId, none.headers.get('x-request-id'));
  const ok = await cluster.api('GET', '/healthz');
  t.regex(ok.headers.get('x-request-id') ?? '', uuid);
  for (const unusable of ['has spaces', 'x'.repeat(129), 'quote"d', '{"msg":"forged"}']) {
    const r = await cluster.api('GET', '/api/jobs', { headers: { 'x-request-id': unusable } });
    t.regex(r.headers.get('x-request-id') ?? '', uuid, unusable);
    t.is(r.body.requestId, r.headers.get('x-request-id'));
  }
});

test("the request id is on the coordinator's log lines for that request", async (t) => {
  const { key } = await cluster.org({ credits: 5 });
  const requestId = `log-check-${Date.now()}`;
  const r = await cluster.api('POST', '/api/jobs', { key, body: JOB, headers: { 'x-request-id': requestId } });
  t.is(r.status, 201);
  const lines = stdoutLines.map((l) => {
    try {
      return JSON.parse(l) as Parsed;
    } catch {
      return undefined;
    }
  });
  const created = lines.find((l) => l?.msg === 'job created' && l.jobId === r.body.id);
  t.truthy(created, 'the coordinator logged the job it created');
  t.is(created.requestId, requestId);
  t.is(created.service, 'coordinator');
});

test('CORS: a preflight from a listed origin is answered 204 with the methods and headers; an unlisted one gets no CORS headers', async (t) => {
  const preflight = (origin: string) =>
    cluster.api('OPTIONS', '/api/jobs', {
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type, idempotency-key, x-request-id',
      },
    });
  const allowed = await preflight(ALLOWED_ORIGIN);
  t.is(allowed.status, 204);
  t.is(allowed.headers.get('access-control-allow-origin'), ALLOWED_ORIGIN);
  t.is(allowed.headers.get('access-control-allow-credentials'), null);
  const methods = (allowed.headers.get('access-control-allow-methods') ?? '').split(/,\s*/);
  for (const m of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) t.true(methods.includes(m), m);
  const headers = (allowed.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/,\s*/);
  for (const h of ['authorization', 'content-type', 'idempotency-key', 'x-request-id', 'x-api-key']) t.true(headers.includes(h), h);
  t.regex(allowed.headers.get('vary') ?? '', /Origin/);

  const unlisted = await preflight('https://evil.example.com');
  t.is(unlisted.headers.get('access-control-allow-origin'), null);
  t.is(unlisted.headers.get('access-control-allow-methods'), null);

  // A real request from the listed origin may read the request id, Retry-After and the rate-limit headers.
  const { key } = await cluster.org();
  const got = await cluster.api('GET', '/api/jobs', { key, headers: { origin: ALLOWED_ORIGIN } });
  t.is(got.status, 200);
  t.is(got.headers.get('access-control-allow-origin'), ALLOWED_ORIGIN);
  const exposed = (got.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(/,\s*/);
  for (const h of ['x-request-id', 'retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'])
    t.true(exposed.includes(h), h);
  const fromElsewhere = await cluster.api('GET', '/api/jobs', { key, headers: { origin: 'https://evil.example.com' } });
  t.is(fromElsewhere.headers.get('access-control-allow-origin'), null);
  t.is(fromElsewhere.headers.get('access-control-expose-headers'), null);
});

test('CORS_ORIGINS is read and checked by the config loader: none by default, origins only', (t) => {
  t.deepEqual(loadConfig({}, {}).corsOrigins, []);
  t.deepEqual(loadConfig({}, { CORS_ORIGINS: 'https://a.example.com, http://localhost:5173' }).corsOrigins, [
    'https://a.example.com',
    'http://localhost:5173',
  ]);
  for (const bad of ['https://a.example.com/app', '*', 'a.example.com', 'https://a.example.com/']) {
    t.throws(() => loadConfig({}, { CORS_ORIGINS: bad }), { message: /CORS_ORIGINS/ }, bad);
  }
});

test('/openapi.json documents Idempotency-Key on the creating POSTs and X-Request-Id everywhere', async (t) => {
  const doc = (await cluster.api('GET', '/openapi.json')).body;
  const names = (op: Parsed) => (op.parameters as Parsed[]).map((p) => p.name);
  for (const [path, method] of [
    ['/api/jobs', 'post'],
    ['/api/jobs/{jobId}/retry', 'post'],
    ['/api/render', 'post'],
    ['/api/organizations/brandings', 'post'],
    ['/api/organizations/social-posts/publish', 'post'],
  ] as const) {
    t.true(names(doc.paths[path][method]).includes('Idempotency-Key'), `${method} ${path}`);
  }
  t.false(names(doc.paths['/api/jobs'].get).includes('Idempotency-Key'));
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, Parsed>>)) {
    for (const [method, op] of Object.entries(ops)) t.true(names(op).includes('X-Request-Id'), `${method} ${path}`);
  }
  t.true(doc.components.schemas.Error.properties.code.enum.includes('idempotency_key_reused'));
});

test("the request id goes with the task it queues: on the task, on the coordinator's task lines and on the agent's", async (t) => {
  const agent = await cluster.startAgent({ AGENT_TASK_TYPES: 'probe-media' });
  const { key } = await cluster.org();
  const requestId = `probe-${Date.now()}`;
  const r = await cluster.api('POST', '/api/probes', {
    key,
    body: { url: 'http://127.0.0.1:9/missing.mp4' },
    headers: { 'x-request-id': requestId },
  });
  t.is(r.status, 201, JSON.stringify(r.body));
  const row = await cluster.app.db.one<{ request_id: string | null }>('SELECT request_id FROM tasks WHERE id = $1', [r.body.id]);
  t.is(row?.request_id, requestId);
  const started = JSON.parse(await agent.waitForLog(new RegExp(`"task started".*${requestId}|${requestId}.*"task started"`))) as Parsed;
  t.is(started.requestId, requestId);
  t.is(started.taskId, r.body.id);
  const leased = await waitFor(async () =>
    stdoutLines.map((l) => (l.includes(requestId) ? (JSON.parse(l) as Parsed) : undefined)).find((l) => l?.msg === 'task leased'),
  );
  t.is(leased.taskId, r.body.id);
});

test('a tus upload creation retried with the same Idempotency-Key answers the same Location and creates one upload', async (t) => {
  const { org, key } = await cluster.org();
  const metadata = ['organizationId', 'filename', 'filetype']
    .map((k, i) => `${k} ${Buffer.from([org.id, 'clip.mp4', 'video/mp4'][i]!).toString('base64')}`)
    .join(',');
  const create = (length: number) =>
    cluster.api('POST', '/api/uploads/tus', {
      key,
      headers: { 'tus-resumable': '1.0.0', 'upload-length': String(length), 'upload-metadata': metadata, 'idempotency-key': 'tus-create' },
    });
  const first = await create(1000);
  t.is(first.status, 201, JSON.stringify(first.body));
  const again = await create(1000);
  t.is(again.status, 201);
  t.is(again.headers.get('location'), first.headers.get('location'));
  t.is(again.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(again.body, first.body);
  const uploads = await cluster.app.db.one<{ n: number }>('SELECT count(*)::int AS n FROM uploads WHERE organization_id = $1', [org.id]);
  t.is(uploads?.n, 1);
  const otherLength = await create(2000);
  t.is(otherLength.status, 422);
  t.is(otherLength.body.code, 'idempotency_key_reused');
});

test('keys are kept in Postgres: another coordinator on the database answers the retry', async (t) => {
  const { org, key } = await cluster.org({ credits: 5 });
  const first = await postJob(key, 'across-coordinators');
  t.is(first.status, 201);
  const other = await cluster.startCoordinator({ overrides: { corsOrigins: ALLOWED_ORIGIN } });
  t.teardown(() => other.close());
  const res = await fetch(`${other.httpUrl}/api/jobs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'across-coordinators' },
    body: JSON.stringify(JOB),
  });
  t.is(res.status, 201);
  t.deepEqual(await res.json(), first.body);
  t.is(res.headers.get('idempotent-replayed'), 'true');
  t.is(await jobCount(org.id), 1);
});

test('an expired key is swept and may be used again for a new request', async (t) => {
  const { org, key } = await cluster.org({ credits: 5 });
  const first = await postJob(key, 'expiring');
  t.is(first.status, 201);
  // 24 h later, as far as the key is concerned.
  await cluster.app.db.query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE organization_id = $1`, [org.id]);
  const later = await postJob(key, 'expiring', { ...JOB, name: 'A new request' });
  t.is(later.status, 201);
  t.not(later.body.id, first.body.id);
  t.is(await jobCount(org.id), 2);
  await cluster.app.db.query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE organization_id = $1`, [org.id]);
  t.true((await new IdempotencyKeys(cluster.app.db, cluster.app.log).sweepExpired()) >= 1);
  const left = await cluster.app.db.one<{ n: number }>('SELECT count(*)::int AS n FROM idempotency_keys WHERE organization_id = $1', [
    org.id,
  ]);
  t.is(left?.n, 0);
});

test('a key whose first request is still running is 409; one left unsettled 10 minutes is taken over', async (t) => {
  const { org, key } = await cluster.org({ credits: 5 });
  // What a coordinator serving the first request holds while it runs (the claim, no answer yet).
  const hash = createHash('sha256')
    .update(`POST /api/jobs\n${canonicalJson(JOB)}`)
    .digest('hex');
  await cluster.app.db.query(
    `INSERT INTO idempotency_keys (organization_id, key, request_hash, expires_at) VALUES ($1, 'running', $2, now() + interval '1 day')`,
    [org.id, hash],
  );
  const meanwhile = await postJob(key, 'running');
  t.is(meanwhile.status, 409);
  t.like(meanwhile.body, { error: 'Conflict', code: 'idempotency_key_in_flight' });
  t.is(await jobCount(org.id), 0);
  // Its coordinator died mid-request: after 10 minutes a retry runs it.
  await cluster.app.db.query(`UPDATE idempotency_keys SET created_at = now() - interval '11 minutes' WHERE organization_id = $1`, [org.id]);
  const retried = await postJob(key, 'running');
  t.is(retried.status, 201);
  t.is(await jobCount(org.id), 1);
  t.deepEqual((await postJob(key, 'running')).body, retried.body);
});
