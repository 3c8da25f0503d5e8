import test from 'ava';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { createUser, issueApiKey } from '../coordinator/src/tenancy/tenancy.js';
import { createLogger } from '@shorts/common/logger';

// Contract section 8: file routes are limited by plan, social routes for API-key calls. Small
// limits here (files: free 3, starter 3, pro 5, business 5 a minute; social 2; job creation free 2,
// pro 3) so a test can reach them.
let cluster: TestCluster;
test.before(async () => {
  cluster = await startCluster('rate_limits', {
    rateLimitFilesPerMinute: '3,3,5,5',
    rateLimitSocialPerMinute: 2,
    rateLimitJobsPerMinute: '2,2,3,3',
  });
});
test.after.always(() => cluster?.close());

test('file routes admit the plan limit a minute, then 429 with Retry-After and RateLimit headers', async (t) => {
  const { key } = await cluster.org({ plan: 'free' });
  const remaining: string[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await cluster.api('GET', '/api/uploads/files', { key });
    t.is(res.status, 200);
    t.is(res.headers.get('ratelimit-limit'), '3');
    remaining.push(res.headers.get('ratelimit-remaining')!);
  }
  t.deepEqual(remaining, ['2', '1', '0']);
  const refused = await cluster.api('GET', '/api/uploads', { key });
  t.is(refused.status, 429);
  t.is(refused.body.error, 'Too Many Requests');
  t.regex(refused.body.message, /3 requests per minute/);
  t.true(Number(refused.headers.get('retry-after')) >= 1);
  t.is(refused.headers.get('ratelimit-remaining'), '0');

  // Another organization has its own allowance; a pro one a larger one.
  const other = await cluster.org({ plan: 'free' });
  t.is((await cluster.api('GET', '/api/uploads/files', { key: other.key })).status, 200);
  const pro = await cluster.org({ plan: 'pro' });
  const proStatuses = [];
  for (let i = 0; i < 6; i++) proStatuses.push((await cluster.api('GET', '/api/uploads/files', { key: pro.key })).status);
  t.deepEqual(proStatuses, [200, 200, 200, 200, 200, 429]);
});

test('job creation is limited per organization, whichever of its keys asks', async (t) => {
  const { org, key } = await cluster.org({ plan: 'pro', credits: 100 });
  const { key: secondKey } = await issueApiKey(cluster.app.db, org.id, 'second');
  const create = (k: string) =>
    cluster.api('POST', '/api/jobs', { key: k, body: { functionName: 'VideoShorts', fileUrl: 'http://127.0.0.1:9/talk.mp4' } });
  const statuses = [];
  for (const k of [key, secondKey, key, secondKey]) statuses.push((await create(k)).status);
  t.deepEqual(statuses, [201, 201, 201, 429]);
  const refused = await create(key);
  t.is(refused.status, 429);
  t.regex(refused.body.message, /3 requests per minute/);
  t.true(Number(refused.headers.get('retry-after')) >= 1);
  // The refused calls created nothing.
  const jobs = await cluster.app.db.query('SELECT 1 FROM jobs WHERE organization_id = $1', [org.id]);
  t.is(jobs.length, 3);
  // Reading is not creating: the list stays open, and another organization has its own allowance.
  t.is((await cluster.api('GET', '/api/jobs', { key })).status, 200);
  t.is((await create((await cluster.org({ plan: 'free' })).key)).status, 201);
});

test('job reads are not limited', async (t) => {
  const { key } = await cluster.org({ plan: 'free' });
  for (let i = 0; i < 6; i++) {
    const res = await cluster.api('GET', '/api/jobs', { key });
    t.is(res.status, 200);
    t.is(res.headers.get('ratelimit-limit'), null);
  }
});

test('social routes limit API-key calls, not bearer-token calls', async (t) => {
  const { org, key } = await cluster.org({ plan: 'pro' });
  const viaKey = [];
  for (let i = 0; i < 3; i++) viaKey.push((await cluster.api('GET', '/api/organizations/social-posts/settings', { key })).status);
  t.deepEqual(viaKey, [200, 200, 429]);

  const user = await createUser(cluster.app.db, { email: `social-${Date.now()}@example.com`, organizationId: org.id });
  const token = await cluster.app.signer.issue(user.id);
  for (let i = 0; i < 4; i++) {
    const res = await cluster.api('GET', `/api/organizations/social-posts/settings?organizationId=${org.id}`, { key: token });
    t.is(res.status, 200);
  }
});

test('a case-changed path neither dodges the file-route limit nor reaches a route', async (t) => {
  const { key } = await cluster.org({ plan: 'free' });
  const statuses: number[] = [];
  for (const p of [
    '/api/uploads/files',
    '/API/UPLOADS/files',
    '/Api/Uploads',
    '/api/UPLOADS/files',
    '/api/uploads',
    '/api/uploads/files',
  ]) {
    const res = await cluster.api('GET', p, { key });
    statuses.push(res.status);
    if (res.status === 404) t.is(res.headers.get('ratelimit-limit'), null, `${p} is no route, so it is charged nothing`);
  }
  // Only the three correctly written paths are routes, and they use the whole allowance of 3.
  t.deepEqual(statuses, [200, 404, 404, 404, 200, 200]);
  t.is((await cluster.api('GET', '/api/uploads/files', { key })).status, 429);
  t.is((await cluster.api('GET', '/API/UPLOADS/FILES', { key })).status, 404);
});

test('two coordinators on one database share the buckets: the limit holds across them', async (t) => {
  const second = await cluster.startCoordinator({ log: createLogger({ service: 'coordinator-2' }, 'silent') });
  try {
    const { key } = await cluster.org({ plan: 'free' });
    const get = (base: string) => fetch(`${base}/api/uploads/files`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status);
    // Alternating between the two: three admitted in all, not three each.
    const statuses = [];
    for (const base of [cluster.app.httpUrl, second.httpUrl, cluster.app.httpUrl, second.httpUrl, cluster.app.httpUrl, second.httpUrl])
      statuses.push(await get(base));
    t.deepEqual(statuses, [200, 200, 200, 429, 429, 429]);
    // Concurrent requests on both cannot overdraw the bucket either.
    const other = await cluster.org({ plan: 'free' });
    const burst = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        fetch(`${i % 2 ? second.httpUrl : cluster.app.httpUrl}/api/uploads/files`, {
          headers: { authorization: `Bearer ${other.key}` },
        }).then((r) => r.status),
      ),
    );
    t.is(burst.filter((s) => s === 200).length, 3);
    t.is(burst.filter((s) => s === 429).length, 7);
  } finally {
    await second.close();
  }
});

test('requests refused for bad input still count: an API key cannot probe a limited route for free', async (t) => {
  const { key } = await cluster.org({ plan: 'free' });
  const bad = [];
  for (let i = 0; i < 3; i++) bad.push((await cluster.api('GET', '/api/uploads/files?limit=abc', { key })).status);
  t.deepEqual(bad, [400, 400, 400]);
  const next = await cluster.api('GET', '/api/uploads/files', { key });
  t.is(next.status, 429);
  t.truthy(next.headers.get('retry-after'));
});
