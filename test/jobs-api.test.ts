import test from 'ava';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { createUser, updateOrganization } from '../coordinator/src/tenancy/tenancy.js';
import { parseYoutubeVideoId } from '../coordinator/src/jobs/job-input.js';
import { priceJob } from '../coordinator/src/jobs/pricing.js';
import { insertCompletedJob } from './helpers/completed-job.js';

let cluster: TestCluster;

test.before(async () => {
  cluster = await startCluster('jobs_api');
});
test.after.always(() => cluster?.close());

const VALID = { functionName: 'VideoShorts', fileUrl: 'https://videos.example.com/talk.mp4' };

async function jobCount(orgId: string): Promise<number> {
  return (await cluster.app.db.one<{ n: number }>('SELECT count(*)::int AS n FROM jobs WHERE organization_id = $1', [orgId]))!.n;
}

test('create answers 201 with id and jobId, reserves credits and lists the job as PROCESSING', async (t) => {
  const { org, key } = await cluster.org({ credits: 5 });
  const r = await cluster.api('POST', '/api/jobs', { key, body: { ...VALID, name: 'My talk' } });
  t.is(r.status, 201);
  t.truthy(r.body.id);
  t.is(r.body.jobId, r.body.id);
  t.regex(r.body.id, /^[0-9a-f-]{36}$/);
  const got = await cluster.api('GET', `/api/jobs/${r.body.id}`, { key });
  t.is(got.status, 200);
  // An accepted job is at the first stage value of the contract: 5, initiating services.
  t.like(got.body, { id: r.body.id, title: 'My talk', status: 'PROCESSING', source: 'API', cost: null, costBreakDown: null, progress: 5 });
  t.false('data' in got.body);
  const orgRow = await cluster.app.db.one('SELECT credits, reserved_credits AS r FROM organizations WHERE id = $1', [org.id]);
  t.deepEqual(orgRow, { credits: 5, r: 0.3 });
  const list = await cluster.api('GET', '/api/jobs', { key });
  t.is(list.body.total, 1);
  t.like(list.body.data[0], {
    id: r.body.id,
    status: 'PROCESSING',
    functionName: 'VideoShorts',
    shortsCount: 0,
    cost: null,
    creditUsageStatus: 'PENDING',
    progress: 5,
  });
});

test('optional fields sent as null count as not given', async (t) => {
  const { key } = await cluster.org({ credits: 5 });
  const r = await cluster.api('POST', '/api/jobs', {
    key,
    body: {
      functionName: 'VideoShorts',
      youtubeVideoId: 'dQw4w9WgXcQ',
      fileUrl: null,
      name: null,
      webhook: null,
      options: null,
      organizationId: null,
    },
  });
  t.is(r.status, 201, JSON.stringify(r.body));
  const got = await cluster.api('GET', `/api/jobs/${r.body.id}`, { key });
  t.is(got.body.title, null);
  const neither = await cluster.api('POST', '/api/jobs', {
    key,
    body: { functionName: 'VideoShorts', youtubeVideoId: null, fileUrl: null },
  });
  t.is(neither.status, 400);
  t.regex(neither.body.message, /youtubeVideoId or fileUrl/);
});

test('retrieve: API-key and bearer forms of a completed and of a running job', async (t) => {
  const { org, key } = await cluster.org({ credits: 5 });
  const user = await createUser(cluster.app.db, { email: `forms-${org.id}@example.com`, organizationId: org.id });
  const bearer = { authorization: `Bearer ${await cluster.app.signer.issue(user.id)}` };
  const done = await insertCompletedJob(cluster.app, {
    organizationId: org.id,
    words: [
      { text: 'hello', start: 1, end: 1.5 },
      { text: 'world', start: 12, end: 12.5 },
    ],
    shorts: [
      { startTime: 0, endTime: 10, title: 'First' },
      { startTime: 10, endTime: 20, title: 'Second' },
    ],
  });

  const keyForm = await cluster.api('GET', `/api/jobs/${done}`, { key });
  t.is(keyForm.status, 200);
  t.like(keyForm.body, { id: done, status: 'COMPLETED', cost: 0.3, progress: 100 });
  // The contract's fields, plus titleSource (beyond it): this title was not made from the words.
  t.deepEqual(keyForm.body.data.shorts[0], {
    id: '0',
    content: 'First',
    titleSource: 'user',
    text: 'hello',
    startTime: 0,
    endTime: 10,
    reframe: null,
  });
  t.is(keyForm.body.data.shorts[1].id, '1');

  const bearerForm = await cluster.api('GET', `/api/jobs/${done}?organizationId=${org.id}`, { headers: bearer });
  t.is(bearerForm.status, 200);
  t.like(bearerForm.body, { jobId: done, status: 'COMPLETED', cost: 0.3 });
  t.false('id' in bearerForm.body);
  t.is(typeof bearerForm.body.createdAt, 'string');
  t.truthy(bearerForm.body.data.transcription);
  t.like(bearerForm.body.data.shorts[1], { id: 1, title: 'Second', startId: null, endId: null, startTime: 10, endTime: 20, text: 'world' });

  const running = (await cluster.api('POST', '/api/jobs', { key, body: VALID })).body.id;
  const runningBearer = await cluster.api('GET', `/api/jobs/${running}?organizationId=${org.id}`, { headers: bearer });
  t.like(runningBearer.body, { jobId: running, status: 'PROCESSING' });
  t.false('cost' in runningBearer.body);
  t.false('data' in runningBearer.body);
});

test('unknown and malformed job ids are 404, never 400 or 500', async (t) => {
  const { key } = await cluster.org();
  for (const id of ['01a20000-0000-7000-8000-000000000000', 'not-a-uuid', '123', '%00', "x'%20OR%201=1", 'a'.repeat(300)]) {
    const r = await cluster.api('GET', `/api/jobs/${id}`, { key });
    t.is(r.status, 404, id);
    t.like(r.body, { error: 'Not Found', message: 'Job not found', code: 'not_found' }, id);
  }
});

test('validation failures are 400 with a message and create nothing', async (t) => {
  const { org, key } = await cluster.org({ plan: 'free', credits: 5 });
  const cases: Array<[unknown, RegExp]> = [
    [{ fileUrl: VALID.fileUrl }, /functionName/],
    [{ ...VALID, functionName: 'StoryGenerator' }, /VideoShorts/],
    [{ functionName: 'VideoShorts' }, /youtubeVideoId or fileUrl/],
    [{ ...VALID, youtubeVideoId: 'dQw4w9WgXcQ' }, /not both/],
    [{ functionName: 'VideoShorts', youtubeVideoId: 'short' }, /11-character/],
    [{ functionName: 'VideoShorts', fileUrl: 'not a url' }, /fileUrl/],
    [{ functionName: 'VideoShorts', fileUrl: 'ftp://example.com/a.mp4' }, /http/],
    [{ ...VALID, webhook: 'javascript:alert(1)' }, /webhook/],
    [{ ...VALID, options: { predefinedShorts: [{ start: 0, end: 10 }] } }, /title/],
    [{ ...VALID, options: { predefinedShorts: [{ title: 'a', start: 10, end: 5 }] } }, /end must be greater than start/],
    [{ ...VALID, options: { predefinedShorts: [{ title: 'a', start: -1, end: 5 }] } }, /start/],
    [{ ...VALID, options: { predefinedShorts: [{ title: 'a', start: 0, end: 91 }] } }, /at most 90 seconds/],
    [{ ...VALID, options: { predefinedShorts: [{ title: 'a', start: '0', end: 5 }] } }, /start/],
  ];
  for (const [body, message] of cases) {
    const r = await cluster.api('POST', '/api/jobs', { key, body });
    t.is(r.status, 400, JSON.stringify(body));
    t.regex(r.body.message, message, JSON.stringify(body));
    t.truthy(r.body.error);
  }
  t.is(await jobCount(org.id), 0);
});

test('pro and business allow predefined shorts up to 300 s', async (t) => {
  const { key } = await cluster.org({ plan: 'pro', credits: 5 });
  const ok = await cluster.api('POST', '/api/jobs', {
    key,
    body: { ...VALID, options: { predefinedShorts: [{ title: 'long', start: 0, end: 300 }] } },
  });
  t.is(ok.status, 201);
  const tooLong = await cluster.api('POST', '/api/jobs', {
    key,
    body: { ...VALID, options: { predefinedShorts: [{ title: 'long', start: 0, end: 300.5 }] } },
  });
  t.is(tooLong.status, 400);
});

test('YouTube ids and URL forms', (t) => {
  for (const form of [
    'dQw4w9WgXcQ',
    'https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=10',
    'youtu.be/dQw4w9WgXcQ',
    'https://youtube.com/shorts/dQw4w9WgXcQ',
    'https://m.youtube.com/watch?v=dQw4w9WgXcQ',
    'https://www.youtube.com/embed/dQw4w9WgXcQ',
    'https://www.youtube.com/live/dQw4w9WgXcQ?si=x',
  ]) {
    t.is(parseYoutubeVideoId(form), 'dQw4w9WgXcQ', form);
  }
  for (const bad of ['https://vimeo.com/123', 'https://www.youtube.com/watch?v=short', 'dQw4w9WgXc'])
    t.is(parseYoutubeVideoId(bad), undefined, bad);
});

test('preconditions in order: storage, then phone verification, then credits', async (t) => {
  const { org } = await cluster.org({ plan: 'free', credits: 0 });
  const user = await createUser(cluster.app.db, { email: `p-${org.id}@example.com`, organizationId: org.id, phoneNumber: '+15550100' });
  const token = await cluster.app.signer.issue(user.id);
  const post = () =>
    cluster.api('POST', '/api/jobs', { headers: { authorization: `Bearer ${token}` }, body: { ...VALID, organizationId: org.id } });
  await updateOrganization(cluster.app.db, org.id, { phoneVerificationRequired: true });
  await cluster.app.db.query('UPDATE organizations SET storage_used_bytes = 100000000 WHERE id = $1', [org.id]);

  const full = await post();
  t.is(full.status, 403);
  t.is(full.body.error, 'fullStorage');
  t.deepEqual(full.body.storageInfo, { usedSize: 100, totalSize: 100, availableSize: 0 });

  await cluster.app.db.query('UPDATE organizations SET storage_used_bytes = 0 WHERE id = $1', [org.id]);
  const phone = await post();
  t.is(phone.status, 403);
  t.is(phone.body.error, 'Phone verification required');
  t.is(phone.body.phoneNumber, '+15550100');

  await cluster.app.db.query('UPDATE users SET phone_verified = true WHERE id = $1', [user.id]);
  const credit = await post();
  t.is(credit.status, 403);
  t.is(credit.body.error, 'noEnoughCredit');
  t.truthy(credit.body.message);

  await updateOrganization(cluster.app.db, org.id, { credits: 1 });
  t.is((await post()).status, 201);
  t.is(await jobCount(org.id), 1);
});

test('credits reserved by running jobs count against the balance', async (t) => {
  const { key } = await cluster.org({ credits: 0.6 });
  t.is((await cluster.api('POST', '/api/jobs', { key, body: VALID })).status, 201);
  t.is((await cluster.api('POST', '/api/jobs', { key, body: VALID })).status, 201);
  const third = await cluster.api('POST', '/api/jobs', { key, body: VALID });
  t.is(third.status, 403);
  t.is(third.body.error, 'noEnoughCredit');
});

test('list: search, status filter incl. all, paging with total before paging', async (t) => {
  const { org, key } = await cluster.org({ credits: 100 });
  for (let i = 0; i < 12; i++) {
    await cluster.api('POST', '/api/jobs', { key, body: { ...VALID, name: i % 3 === 0 ? `Cooking show ${i}` : `Podcast ${i}` } });
  }
  const ids = await cluster.app.db.query<{ id: string }>('SELECT id FROM jobs WHERE organization_id = $1 ORDER BY created_at', [org.id]);
  await cluster.app.db.query(`UPDATE jobs SET status = 'FAILED' WHERE id = ANY($1)`, [ids.slice(0, 4).map((r) => r.id)]);

  const first = await cluster.api('GET', '/api/jobs', { key });
  t.is(first.body.total, 12);
  t.is(first.body.data.length, 10);
  const second = await cluster.api('GET', '/api/jobs?limit=5&offset=10', { key });
  t.is(second.body.data.length, 2);
  t.is(second.body.total, 12);
  t.is((await cluster.api('GET', '/api/jobs?query=COOKING', { key })).body.total, 4);
  t.is((await cluster.api('GET', '/api/jobs?status=FAILED', { key })).body.total, 4);
  t.is((await cluster.api('GET', '/api/jobs?status=all', { key })).body.total, 12);
  const both = await cluster.api('GET', '/api/jobs?status=FAILED&query=cooking', { key });
  t.is(both.body.total, 2);
  t.true(both.body.data.every((j: { status: string; title: string }) => j.status === 'FAILED' && /Cooking/.test(j.title)));
  t.is((await cluster.api('GET', '/api/jobs?query=100%25', { key })).body.total, 0);
  t.is((await cluster.api('GET', '/api/jobs?status=completed', { key })).body.total, 0);
  t.is((await cluster.api('GET', '/api/jobs?status=failed', { key })).body.total, 4);
  t.is((await cluster.api('GET', '/api/jobs?limit=100', { key })).body.data.length, 12);
  for (const limit of ['101', '0', 'abc', '2.5', '-3', '1&limit=2']) {
    const r = await cluster.api('GET', `/api/jobs?limit=${limit}`, { key });
    t.is(r.status, 400, limit);
    t.like(r.body, { error: 'Bad Request', message: 'Limit must be between 1 and 100', code: 'invalid_input' }, limit);
  }
  for (const offset of ['-1', 'abc', '1.5']) {
    const r = await cluster.api('GET', `/api/jobs?offset=${offset}`, { key });
    t.is(r.status, 400, offset);
    t.like(r.body, { error: 'Bad Request', message: 'Offset must be a non-negative number', code: 'invalid_input' }, offset);
  }
  t.is((await cluster.api('GET', '/api/jobs?status=DONE', { key })).status, 400);
  // Newest first.
  const times = first.body.data.map((j: { createdAt: string }) => Date.parse(j.createdAt));
  t.deepEqual(
    times,
    [...times].sort((a: number, b: number) => b - a),
  );
});

test("another organization's job is 404", async (t) => {
  const a = await cluster.org();
  const b = await cluster.org();
  const r = await cluster.api('POST', '/api/jobs', { key: a.key, body: VALID });
  const other = await cluster.api('GET', `/api/jobs/${r.body.id}`, { key: b.key });
  t.is(other.status, 404);
  t.truthy(other.body.message);
  t.is((await cluster.api('GET', '/api/jobs', { key: b.key })).body.total, 0);
});

test('price table: per-minute by plan, YouTube per GB with a minimum, 0.30 job minimum', (t) => {
  t.deepEqual(priceJob({ plan: 'free', durationSec: 60, fromYoutube: false, downloadBytes: 0 }), {
    cost: 0.3,
    costBreakDown: { shortGen: 0.03, youtubeProcessing: 0 },
  });
  t.deepEqual(priceJob({ plan: 'pro', durationSec: 3600, fromYoutube: false, downloadBytes: 0 }), {
    cost: 1.56,
    costBreakDown: { shortGen: 1.56, youtubeProcessing: 0 },
  });
  t.deepEqual(priceJob({ plan: 'business', durationSec: 3600, fromYoutube: true, downloadBytes: 2e9 }), {
    cost: 2.58,
    costBreakDown: { shortGen: 1.38, youtubeProcessing: 1.2 },
  });
  t.deepEqual(priceJob({ plan: 'starter', durationSec: 600, fromYoutube: true, downloadBytes: 1e8 }), {
    cost: 0.4,
    costBreakDown: { shortGen: 0.3, youtubeProcessing: 0.1 },
  });
});
