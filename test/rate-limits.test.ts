import test from 'ava';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { createUser } from '../coordinator/src/tenancy/tenancy.js';

// Contract section 8: file routes are limited by plan, social routes for API-key calls. Small
// limits here (files: free 3, starter 3, pro 5, business 5 a minute; social 2) so a test can reach them.
let cluster: TestCluster;
test.before(async () => {
  cluster = await startCluster('rate_limits', { rateLimitFilesPerMinute: '3,3,5,5', rateLimitSocialPerMinute: 2 });
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

test('job routes are not limited', async (t) => {
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
