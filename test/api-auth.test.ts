import test from 'ava';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { createUser, revokeApiKey, issueApiKey } from '../coordinator/src/tenancy/tenancy.js';

let cluster: TestCluster;
let orgA: { id: string };
let orgB: { id: string };
let keyA: string;
let tokenA: string;

test.before(async () => {
  cluster = await startCluster('api_auth');
  ({ org: orgA, key: keyA } = await cluster.org({ name: 'A' }));
  ({ org: orgB } = await cluster.org({ name: 'B' }));
  const user = await createUser(cluster.app.db, { email: 'a@example.com', organizationId: orgA.id });
  tokenA = await cluster.app.signer.issue(user.id);
});
test.after.always(() => cluster?.close());

const list = (headers: Record<string, string>, query = '') => cluster.api('GET', `/api/jobs${query}`, { headers });

test('no credentials: 401 Unauthorized', async (t) => {
  const r = await list({});
  t.is(r.status, 401);
  t.is(r.body.error, 'Unauthorized');
  t.truthy(r.body.message);
});

test('a malformed or unknown key: 401', async (t) => {
  t.is((await list({ authorization: 'Bearer vsk_nope' })).status, 401);
  t.is((await list({ 'x-api-key': 'vsk_' + 'x'.repeat(43) })).status, 401);
  t.is((await list({ authorization: 'Basic Zm9vOmJhcg==' })).status, 401);
});

test('a forged or expired JWT: 401', async (t) => {
  const parts = tokenA.split('.');
  const forged = `${parts[0]}.${parts[1]}.${'A'.repeat(parts[2]!.length)}`;
  t.is((await list({ authorization: `Bearer ${forged}` }, `?organizationId=${orgA.id}`)).status, 401);
  const expired = await cluster.app.signer.issue('someone', -10);
  t.is((await list({ authorization: `Bearer ${expired}` }, `?organizationId=${orgA.id}`)).status, 401);
});

test('a revoked key: 401, while the other keys keep working', async (t) => {
  const extra = await issueApiKey(cluster.app.db, orgA.id, 'to revoke');
  t.is((await list({ authorization: `Bearer ${extra.key}` })).status, 200);
  await revokeApiKey(cluster.app.db, extra.id);
  t.is((await list({ authorization: `Bearer ${extra.key}` })).status, 401);
  t.is((await list({ authorization: `Bearer ${keyA}` })).status, 200);
});

test('an API key in Authorization or X-API-Key, organizationId optional', async (t) => {
  t.is((await list({ authorization: `Bearer ${keyA}` })).status, 200);
  t.is((await list({ 'x-api-key': keyA })).status, 200);
  t.is((await list({ 'x-api-key': keyA }, `?organizationId=${orgA.id}`)).status, 200);
});

test("a key with another organization's id: 403 Not allowed on the jobs routes", async (t) => {
  const r = await list({ authorization: `Bearer ${keyA}` }, `?organizationId=${orgB.id}`);
  t.is(r.status, 403);
  t.is(r.body.error, 'Not allowed');
  t.regex(r.body.message, /different organization|mismatch/i);
  const create = await cluster.api('POST', '/api/jobs', {
    key: keyA,
    body: { functionName: 'VideoShorts', fileUrl: 'https://videos.example.com/a.mp4', organizationId: orgB.id },
  });
  t.is(create.status, 403);
  t.is(create.body.error, 'Not allowed');
});

test("credentials are checked before the request's shape: 401 even with a bad body or query", async (t) => {
  const cases: Array<[string, string, unknown]> = [
    ['POST', '/api/jobs', {}],
    ['POST', '/api/jobs', { functionName: 'Nope' }],
    ['GET', '/api/jobs?limit=abc', undefined],
    ['GET', '/api/jobs?limit=1&limit=2', undefined],
    ['GET', '/api/jobs/%00', undefined],
  ];
  for (const [method, path, body] of cases) {
    for (const headers of [{}, { authorization: 'Bearer vsk_unknown' }] as Array<Record<string, string>>) {
      const r = await cluster.api(method, path, { headers, body });
      t.is(r.status, 401, `${method} ${path}`);
      t.like(r.body, { error: 'Unauthorized', message: 'Unauthorized', code: 'unauthorized' }, `${method} ${path}`);
    }
  }
  for (const [contentType, body] of [
    ['application/json', '{"functionName":'],
    ['text/plain', 'hello'],
  ]) {
    const r = await fetch(cluster.app.httpUrl + '/api/jobs', { method: 'POST', headers: { 'content-type': contentType! }, body });
    t.is(r.status, 401, contentType);
    t.is((await r.json()).error, 'Unauthorized');
  }
});

test('a bearer token needs organizationId and a membership', async (t) => {
  const missing = await list({ authorization: `Bearer ${tokenA}` });
  t.is(missing.status, 400);
  t.regex(missing.body.message, /organizationId is required/);
  const other = await list({ authorization: `Bearer ${tokenA}` }, `?organizationId=${orgB.id}`);
  t.is(other.status, 403);
  t.is(other.body.error, 'Not allowed');
  const ok = await list({ authorization: `Bearer ${tokenA}` }, `?organizationId=${orgA.id}`);
  t.is(ok.status, 200);
  t.deepEqual(ok.body, { data: [], total: 0 });
});

test('health, readiness, metrics and the OpenAPI document need no credentials', async (t) => {
  t.is((await cluster.api('GET', '/healthz')).status, 200);
  t.is((await cluster.api('GET', '/readyz')).status, 200);
  const metrics = await cluster.api('GET', '/metrics');
  t.regex(metrics.body, /shorts_agents_connected 0/);
  t.regex(metrics.body, /process_cpu_user_seconds_total/);
  const doc = await cluster.api('GET', '/openapi.json');
  t.is(doc.body.openapi, '3.1.0');
  t.truthy(doc.body.paths['/api/jobs'].post.requestBody);
  t.truthy(doc.body.paths['/api/jobs/{jobId}'].get);
  const docs = await cluster.api('GET', '/docs');
  t.regex(docs.body, /openapi\.json/);
});

test('unknown routes and oversized or broken bodies get JSON errors', async (t) => {
  const nf = await cluster.api('GET', '/api/nothing-here', { headers: { authorization: `Bearer ${keyA}` } });
  t.is(nf.status, 404);
  t.truthy(nf.body.error && nf.body.message);
  const big = await fetch(cluster.app.httpUrl + '/api/jobs', {
    method: 'POST',
    headers: { authorization: `Bearer ${keyA}`, 'content-type': 'application/json' },
    body: JSON.stringify({ functionName: 'VideoShorts', name: 'x'.repeat(2_000_000) }),
  });
  t.is(big.status, 413);
  t.truthy((await big.json()).message);
  const broken = await fetch(cluster.app.httpUrl + '/api/jobs', {
    method: 'POST',
    headers: { authorization: `Bearer ${keyA}`, 'content-type': 'application/json' },
    body: '{"functionName":',
  });
  t.is(broken.status, 400);
  t.regex((await broken.json()).message, /JSON/);
  const plain = await fetch(cluster.app.httpUrl + '/api/jobs', {
    method: 'POST',
    headers: { authorization: `Bearer ${keyA}`, 'content-type': 'text/plain' },
    body: 'hello',
  });
  t.is(plain.status, 415);
  t.like(await plain.json(), {
    error: 'Unsupported Media Type',
    message: 'Send Content-Type: application/json with a JSON body (not text/plain)',
    code: 'unsupported_media_type',
  });
});
