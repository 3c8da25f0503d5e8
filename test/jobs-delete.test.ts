import test from 'ava';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { newId } from '../coordinator/src/ids.js';
import { createUser } from '../coordinator/src/tenancy/tenancy.js';

// DELETE /api/jobs/:jobId, POST /api/jobs/:jobId/retry, a failed job's reason in the list, and the
// organization's API-key routes, against a real coordinator and Postgres.

let cluster: TestCluster;

test.before(async () => {
  cluster = await startCluster('jobs_delete');
});
test.after.always(() => cluster?.close());

const WORDS = [
  { text: 'hello', start: 1, end: 1.5 },
  { text: 'world', start: 2, end: 2.5 },
];
const usedBytes = async (orgId: string) =>
  Number((await cluster.app.db.one<{ n: number }>('SELECT storage_used_bytes AS n FROM organizations WHERE id = $1', [orgId]))!.n);
const objectsUnder = async (prefix: string) => {
  const keys: string[] = [];
  for await (const obj of cluster.app.store.list(prefix)) keys.push(obj.key);
  return keys;
};

async function failedUrlJob(orgId: string, key: string, message: string): Promise<string> {
  const r = await cluster.api('POST', '/api/jobs', {
    key,
    body: {
      functionName: 'VideoShorts',
      name: 'Broken link',
      fileUrl: 'https://videos.example.com/missing.mp4',
      options: { predefinedShorts: [{ title: 'Intro', start: 0, end: 20 }] },
    },
  });
  // What the analysis outcome leaves when the download fails (no agent runs in this file).
  await cluster.app.db.query(`UPDATE jobs SET status = 'FAILED', error_message = $2, credit_usage_status = 'RELEASED' WHERE id = $1`, [
    r.body.id,
    message,
  ]);
  await cluster.app.db.query(`UPDATE tasks SET state = 'failed' WHERE subject_id = $1`, [r.body.id]);
  return r.body.id;
}

test('delete: a completed job leaves the API, its files and objects go, and storage usage drops by exactly their bytes', async (t) => {
  const { org, key } = await cluster.org();
  const jobId = await insertCompletedJob(cluster.app, { organizationId: org.id, words: WORDS, shorts: [{ startTime: 0, endTime: 3 }] });
  const kept = await insertCompletedJob(cluster.app, { organizationId: org.id, words: WORDS, shorts: [{ startTime: 0, endTime: 3 }] });
  await cluster.app.db.query('UPDATE organizations SET storage_used_bytes = 2 WHERE id = $1', [org.id]);
  t.is((await objectsUnder(`orgs/${org.id}/tasks/${jobId}/`)).length, 1);

  const r = await cluster.api('DELETE', `/api/jobs/${jobId}`, { key });
  t.is(r.status, 200, JSON.stringify(r.body));
  t.deepEqual(r.body, { id: jobId, deleted: true, deletedFiles: 1, freedBytes: 1 });
  t.is((await cluster.api('GET', `/api/jobs/${jobId}`, { key })).status, 404);
  const list = await cluster.api('GET', '/api/jobs', { key });
  t.deepEqual(
    list.body.data.map((j: { id: string }) => j.id),
    [kept],
  );
  t.deepEqual(await objectsUnder(`orgs/${org.id}/tasks/${jobId}/`), []);
  t.is(await usedBytes(org.id), 1);
  // The other job's files are untouched.
  t.is((await objectsUnder(`orgs/${org.id}/tasks/${kept}/`)).length, 1);

  const again = await cluster.api('DELETE', `/api/jobs/${jobId}`, { key });
  t.is(again.status, 404);
  t.is(again.body.message, 'Job not found');
});

test("delete: another organization's job is 404 and stays as it was; an unknown id is 404", async (t) => {
  const a = await cluster.org();
  const b = await cluster.org();
  const jobId = await insertCompletedJob(cluster.app, { organizationId: a.org.id, words: WORDS, shorts: [{ startTime: 0, endTime: 3 }] });
  const r = await cluster.api('DELETE', `/api/jobs/${jobId}`, { key: b.key });
  t.is(r.status, 404);
  t.is(r.body.message, 'Job not found');
  t.is((await cluster.api('GET', `/api/jobs/${jobId}`, { key: a.key })).body.status, 'COMPLETED');
  t.is((await objectsUnder(`orgs/${a.org.id}/tasks/${jobId}/`)).length, 1);
  t.is((await cluster.api('DELETE', `/api/jobs/${newId()}`, { key: a.key })).status, 404);
  t.is((await cluster.api('DELETE', '/api/jobs/not-an-id', { key: a.key })).status, 404);
  t.is((await cluster.api('DELETE', `/api/jobs/${jobId}`, {})).status, 401);
});

test('delete: a PROCESSING job, or one with a render still queued, is refused with 409 and nothing changes', async (t) => {
  const { org, key } = await cluster.org();
  const created = await cluster.api('POST', '/api/jobs', {
    key,
    body: { functionName: 'VideoShorts', fileUrl: 'https://videos.example.com/talk.mp4' },
  });
  const r = await cluster.api('DELETE', `/api/jobs/${created.body.id}`, { key });
  t.is(r.status, 409);
  t.regex(r.body.message, /still processing/);
  t.is((await cluster.api('GET', `/api/jobs/${created.body.id}`, { key })).body.status, 'PROCESSING');

  const done = await insertCompletedJob(cluster.app, { organizationId: org.id, words: WORDS, shorts: [{ startTime: 0, endTime: 3 }] });
  const render = await cluster.api('POST', '/api/render', { key, body: { id: done, target: 0 } });
  t.is(render.status, 201, JSON.stringify(render.body));
  const busy = await cluster.api('DELETE', `/api/jobs/${done}`, { key });
  t.is(busy.status, 409);
  t.regex(busy.body.message, /render/);
  t.is((await cluster.api('GET', `/api/jobs/${done}`, { key })).body.status, 'COMPLETED');
  t.is((await objectsUnder(`orgs/${org.id}/tasks/${done}/`)).length, 1);
});

test("the job list carries a failed job's reason; retry starts a new job from the same URL, title and options", async (t) => {
  const { org, key } = await cluster.org({ credits: 5 });
  const failed = await failedUrlJob(org.id, key, 'Download failed: the server answered 404');
  const list = await cluster.api('GET', '/api/jobs', { key });
  const item = list.body.data.find((j: { id: string }) => j.id === failed);
  t.like(item, { status: 'FAILED', message: 'Download failed: the server answered 404' });

  const retry = await cluster.api('POST', `/api/jobs/${failed}/retry`, { key });
  t.is(retry.status, 201, JSON.stringify(retry.body));
  t.not(retry.body.id, failed);
  t.is(retry.body.jobId, retry.body.id);
  const row = await cluster.app.db.one('SELECT title, status, file_url AS "fileUrl", options FROM jobs WHERE id = $1', [retry.body.id]);
  t.deepEqual(row, {
    title: 'Broken link',
    status: 'PROCESSING',
    fileUrl: 'https://videos.example.com/missing.mp4',
    options: { predefinedShorts: [{ title: 'Intro', start: 0, end: 20 }] },
  });
  // Its analysis is queued like any new job's, with the same predefined short.
  const task = await cluster.app.db.one<{ payload: Record<string, unknown> }>(
    `SELECT payload FROM tasks WHERE subject_id = $1 AND type = 'analyze-video'`,
    [retry.body.id],
  );
  t.deepEqual(task!.payload.predefinedShorts, [{ title: 'Intro', start: 0, end: 20 }]);

  // A running job cannot be retried; another organization's job is 404.
  const running = await cluster.api('POST', `/api/jobs/${retry.body.id}/retry`, { key });
  t.is(running.status, 409);
  const other = await cluster.org();
  t.is((await cluster.api('POST', `/api/jobs/${failed}/retry`, { key: other.key })).status, 404);
});

test('retry: a failed upload (its video not kept) is a 400 saying to upload again; a completed upload reruns from its stored video', async (t) => {
  const { org, key } = await cluster.org({ credits: 5 });
  const id = newId();
  await cluster.app.db.query(
    `INSERT INTO jobs (id, organization_id, function_name, title, status, progress, source, error_message) VALUES ($1, $2, 'VideoShorts', 'upload', 'FAILED', 20, 'WEB_APP', 'Transcription failed')`,
    [id, org.id],
  );
  const r = await cluster.api('POST', `/api/jobs/${id}/retry`, { key });
  t.is(r.status, 400);
  t.regex(r.body.message, /upload the file again/);
  t.is((await cluster.app.db.one<{ n: number }>('SELECT count(*)::int AS n FROM jobs WHERE organization_id = $1', [org.id]))!.n, 1);

  const done = await insertCompletedJob(cluster.app, { organizationId: org.id, words: WORDS, shorts: [{ startTime: 0, endTime: 3 }] });
  const again = await cluster.api('POST', `/api/jobs/${done}/retry`, { key });
  t.is(again.status, 201, JSON.stringify(again.body));
  const task = await cluster.app.db.one<{ payload: Record<string, unknown> }>(
    `SELECT payload FROM tasks WHERE subject_id = $1 AND type = 'analyze-video'`,
    [again.body.id],
  );
  t.like(task!.payload.source, { kind: 'object', objectKey: `orgs/${org.id}/tasks/${done}/source.mp4`, consume: false });
});

test('API keys: an owner lists, creates (the key shown once, and it works) and revokes (it stops working); a key cannot manage keys', async (t) => {
  const { org, key } = await cluster.org();
  const owner = await createUser(cluster.app.db, { email: `owner-${org.id}@example.com`, organizationId: org.id, role: 'owner' });
  const bearer = { authorization: `Bearer ${await cluster.app.signer.issue(owner.id)}` };
  const q = `?organizationId=${org.id}`;

  const byKey = await cluster.api('GET', '/api/organizations/api-keys', { key });
  t.is(byKey.status, 403);
  t.regex(byKey.body.message, /not with an API key/);

  const noName = await cluster.api('POST', '/api/organizations/api-keys', {
    headers: bearer,
    body: { organizationId: org.id, name: '  ' },
  });
  t.is(noName.status, 400);
  t.regex(noName.body.message, /name is required/);

  const created = await cluster.api('POST', '/api/organizations/api-keys', {
    headers: bearer,
    body: { organizationId: org.id, name: 'CI uploader' },
  });
  t.is(created.status, 201, JSON.stringify(created.body));
  t.regex(created.body.key, /^vsk_/);
  t.like(created.body, { name: 'CI uploader', prefix: 'vsk_', last4: created.body.key.slice(-4), revokedAt: null });
  t.is((await cluster.api('GET', '/api/jobs', { key: created.body.key })).status, 200);

  const list = await cluster.api('GET', `/api/organizations/api-keys${q}`, { headers: bearer });
  t.is(list.status, 200);
  t.deepEqual(
    list.body.keys.map((k: { name: string }) => k.name),
    ['test', 'CI uploader'],
  );
  t.false(JSON.stringify(list.body).includes(created.body.key));

  const revoked = await cluster.api('DELETE', `/api/organizations/api-keys/${created.body.id}${q}`, { headers: bearer });
  t.is(revoked.status, 200);
  t.truthy(revoked.body.revokedAt);
  t.is((await cluster.api('GET', '/api/jobs', { key: created.body.key })).status, 401);
});

test("API keys: another organization's key is 404 and stays valid; a plain member may not manage keys", async (t) => {
  const a = await cluster.org();
  const b = await cluster.org();
  const ownerA = await createUser(cluster.app.db, { email: `owner-a-${a.org.id}@example.com`, organizationId: a.org.id, role: 'owner' });
  const bearerA = { authorization: `Bearer ${await cluster.app.signer.issue(ownerA.id)}` };
  const bKeyId = (await cluster.app.db.one<{ id: string }>('SELECT id FROM api_keys WHERE organization_id = $1', [b.org.id]))!.id;
  const r = await cluster.api('DELETE', `/api/organizations/api-keys/${bKeyId}?organizationId=${a.org.id}`, { headers: bearerA });
  t.is(r.status, 404);
  t.is((await cluster.api('GET', '/api/jobs', { key: b.key })).status, 200);
  // Naming the other organization is refused before any key is looked at.
  t.is((await cluster.api('DELETE', `/api/organizations/api-keys/${bKeyId}?organizationId=${b.org.id}`, { headers: bearerA })).status, 403);

  const member = await createUser(cluster.app.db, { email: `member-${a.org.id}@example.com`, organizationId: a.org.id, role: 'member' });
  const bearerM = { authorization: `Bearer ${await cluster.app.signer.issue(member.id)}` };
  const m = await cluster.api('POST', '/api/organizations/api-keys', {
    headers: bearerM,
    body: { organizationId: a.org.id, name: 'mine' },
  });
  t.is(m.status, 403);
  t.regex(m.body.message, /owner or admin/);
  t.is((await cluster.app.db.one<{ n: number }>('SELECT count(*)::int AS n FROM api_keys WHERE organization_id = $1', [a.org.id]))!.n, 1);
});
