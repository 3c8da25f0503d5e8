import test from 'ava';
import path from 'node:path';
import sharp from 'sharp';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { makeTestVideo } from './helpers/media.js';
import { createUser } from '../coordinator/src/tenancy/tenancy.js';
import { addFileFromPath, storeFile } from '../coordinator/src/files/store-file.js';
import type { FileType } from '../coordinator/src/files/files.js';
import type { ObjectStore } from '../coordinator/src/storage/object-store.js';

let cluster: TestCluster;
let png: Buffer;

test.before(async () => {
  cluster = await startCluster('files_api');
  png = await sharp({ create: { width: 16, height: 16, channels: 4, background: '#ff0000' } })
    .png()
    .toBuffer();
});
test.after.always(() => cluster?.close());

const usedBytes = async (orgId: string) =>
  Number((await cluster.app.db.one<{ n: number }>('SELECT storage_used_bytes AS n FROM organizations WHERE id = $1', [orgId]))!.n);

function add(orgId: string, name: string, opts: { type?: FileType; tags?: string[]; bytes?: number; jobId?: string } = {}) {
  const source = opts.bytes === undefined ? png : Buffer.alloc(opts.bytes, 1);
  return storeFile(cluster.app, { organizationId: orgId, name, source, type: opts.type ?? 'image', tags: opts.tags, jobId: opts.jobId });
}

test('summary: allocation per plan and usage in MB of 1,000,000 bytes', async (t) => {
  for (const [plan, mb] of [
    ['free', 100],
    ['starter', 100],
    ['pro', 1000],
    ['business', 10000],
  ] as const) {
    const { key } = await cluster.org({ plan });
    const r = await cluster.api('GET', '/api/uploads', { key });
    t.is(r.status, 200);
    t.deepEqual(r.body, { subSize: mb, usedSize: 0, usedSizePercent: 0, files: [] }, plan);
  }
  const { org, key } = await cluster.org({ plan: 'free' });
  await add(org.id, 'a.bin', { bytes: 1_234_567 });
  await add(org.id, 'b.bin', { bytes: 265_433 });
  const r = await cluster.api('GET', '/api/uploads', { key });
  t.like(r.body, { subSize: 100, usedSize: 1.5, usedSizePercent: 1.5 });
  t.is(r.body.files.length, 2);
  t.is(await usedBytes(org.id), 1_500_000);
});

test('list: type and tags (any of) combine; total counts before paging', async (t) => {
  const { org, key } = await cluster.org();
  await add(org.id, 'logo.png', { tags: ['logo', 'brand'] });
  await add(org.id, 'icon.png', { tags: ['icon'] });
  await add(org.id, 'plain.png');
  await add(org.id, 'intro.mp4', { type: 'video', tags: ['intro', 'brand'], bytes: 2000 });
  await add(org.id, 'voice.mp3', { type: 'audio', tags: ['logo'], bytes: 3000 });

  const names = async (qs: string) => {
    const r = await cluster.api('GET', `/api/uploads/files${qs}`, { key });
    t.is(r.status, 200, qs);
    return { names: (r.body.files as Array<{ name: string }>).map((f) => f.name).sort(), total: r.body.total, body: r.body };
  };
  t.deepEqual((await names('')).names, ['icon.png', 'intro.mp4', 'logo.png', 'plain.png', 'voice.mp3']);
  t.deepEqual((await names('?type=image')).names, ['icon.png', 'logo.png', 'plain.png']);
  t.deepEqual((await names('?type=video')).names, ['intro.mp4']);
  t.deepEqual((await names('?tags=logo')).names, ['logo.png', 'voice.mp3']);
  t.deepEqual((await names('?tags=icon,intro')).names, ['icon.png', 'intro.mp4']);
  t.deepEqual((await names('?tags=icon&tags=intro')).names, ['icon.png', 'intro.mp4']);
  t.deepEqual((await names('?tags=%20brand%20,')).names, ['intro.mp4', 'logo.png']);
  t.deepEqual((await names('?type=image&tags=brand,icon')).names, ['icon.png', 'logo.png']);
  t.deepEqual((await names('?type=audio&tags=brand')).names, []);

  const page = await names('?type=image&limit=2&offset=0');
  t.is(page.names.length, 2);
  t.like(page.body, { total: 3, limit: 2, offset: 0, pages: 2, subSize: 1000 });
  const second = await names('?type=image&limit=2&offset=2');
  t.is(second.names.length, 1);
  t.is(second.total, 3);
  // Newest first, and the two pages together are the whole set.
  t.deepEqual([...page.names, ...second.names].sort(), ['icon.png', 'logo.png', 'plain.png']);
  const past = await names('?offset=50');
  t.deepEqual(past.names, []);
  t.is(past.total, 5);
  const defaults = await names('');
  t.like(defaults.body, { limit: 50, offset: 0, total: 5, pages: 1 });
  t.is(defaults.body.files[0].name, 'voice.mp3');

  const bad = await cluster.api('GET', '/api/uploads/files?type=document', { key });
  t.is(bad.status, 400);
  t.regex(bad.body.message, /type must be one of image, video, audio/);
});

test('list: the two 400 messages, exactly', async (t) => {
  const { key } = await cluster.org();
  for (const limit of ['0', '101', '-5', 'abc', '1.5', '1e3']) {
    const r = await cluster.api('GET', `/api/uploads/files?limit=${limit}`, { key });
    t.is(r.status, 400, limit);
    t.is(r.body.message, 'Limit must be between 1 and 100', limit);
    t.is(typeof r.body.error, 'string');
  }
  for (const offset of ['-1', 'abc', '2.5']) {
    const r = await cluster.api('GET', `/api/uploads/files?offset=${offset}`, { key });
    t.is(r.status, 400, offset);
    t.is(r.body.message, 'Offset must be a non-negative number', offset);
  }
  for (const qs of ['limit=1', 'limit=100', 'offset=0', 'limit=&offset=']) {
    t.is((await cluster.api('GET', `/api/uploads/files?${qs}`, { key })).status, 200, qs);
  }
});

test('a file object: contract fields only, signed url served with ranges', async (t) => {
  const { org, key } = await cluster.org();
  const stored = await add(org.id, 'logo.png', { tags: ['logo'] });
  const r = await cluster.api('GET', `/api/uploads/files/${stored.id}`, { key });
  t.is(r.status, 200);
  t.deepEqual(Object.keys(r.body).sort(), [
    'createdAt',
    'description',
    'id',
    'jobId',
    'length',
    'name',
    'size',
    'status',
    'tags',
    'thumbnailUrl',
    'type',
    'url',
  ]);
  t.like(r.body, {
    id: stored.id,
    name: 'logo.png',
    type: 'image',
    size: png.length,
    length: 0,
    status: 'completed',
    tags: ['logo'],
    jobId: null,
    thumbnailUrl: null,
    description: null,
  });
  for (const hidden of ['key', 'userId', 'organizationId', 'objectKey']) t.false(hidden in r.body);

  const whole = await fetch(r.body.url);
  t.is(whole.status, 200);
  t.deepEqual(Buffer.from(await whole.arrayBuffer()), png);
  const part = await fetch(r.body.url, { headers: { range: 'bytes=1-3' } });
  t.is(part.status, 206);
  t.deepEqual(Buffer.from(await part.arrayBuffer()), png.subarray(1, 4));
  const forged = await fetch(r.body.url.replace(/sig=[^&]+/, 'sig=0000'));
  t.is(forged.status, 403);
});

test('a video added from a path gets its ffprobe length and a grabbed thumbnail', async (t) => {
  const { org, key } = await cluster.org();
  const video = await makeTestVideo(path.join(cluster.dataDir, 'clip.mp4'), { seconds: 3 });
  const stored = await addFileFromPath(cluster.app, org.id, video, { tags: ['upload'], description: 'a test clip' });
  t.is(stored.type, 'video');
  const r = await cluster.api('GET', `/api/uploads/files/${stored.id}`, { key });
  t.like(r.body, { type: 'video', name: 'clip.mp4', description: 'a test clip', tags: ['upload'] });
  t.true(Math.abs(r.body.length - 3) < 0.2, `length ${r.body.length}`);
  t.truthy(r.body.thumbnailUrl);
  const thumb = Buffer.from(await (await fetch(r.body.thumbnailUrl)).arrayBuffer());
  const meta = await sharp(thumb).metadata();
  t.is(meta.format, 'jpeg');
  t.is(meta.width, 320);
  t.is(await usedBytes(org.id), r.body.size, 'the thumbnail is not counted, the video exactly');
});

test('storage is refused before it would exceed the plan, leaving no object behind', async (t) => {
  const { org } = await cluster.org({ plan: 'free' });
  await cluster.app.db.query('UPDATE organizations SET storage_used_bytes = $2 WHERE id = $1', [org.id, 100_000_000 - 100]);
  const err = await t.throwsAsync<Error & { status?: number; error?: string }>(add(org.id, 'big.bin', { bytes: 101 }));
  t.is(err?.status, 403);
  t.is(err?.error, 'fullStorage');
  const left: string[] = [];
  for await (const o of cluster.app.store.list(`orgs/${org.id}/`)) left.push(o.key);
  t.deepEqual(left, []);
  t.is(await usedBytes(org.id), 100_000_000 - 100);
  await add(org.id, 'fits.bin', { bytes: 100 });
  t.is(await usedBytes(org.id), 100_000_000);
});

test("another organization's file is 404 File not found on get and delete", async (t) => {
  const a = await cluster.org();
  const b = await cluster.org();
  const file = await add(b.org.id, 'secret.png');
  for (const method of ['GET', 'DELETE']) {
    const r = await cluster.api(method, `/api/uploads/files/${file.id}`, { key: a.key });
    t.is(r.status, 404, method);
    t.is(r.body.message, 'File not found');
    t.truthy(r.body.error);
  }
  const missing = await cluster.api('GET', '/api/uploads/files/00000000-0000-7000-8000-000000000000', { key: a.key });
  t.is(missing.status, 404);
  t.is(missing.body.message, 'File not found');
  const list = await cluster.api('GET', '/api/uploads/files', { key: a.key });
  t.is(list.body.total, 0);
  t.is((await cluster.api('GET', `/api/uploads/files/${file.id}`, { key: b.key })).status, 200, 'still there for its owner');
});

test('malformed ids are 404 File not found, never 500; NUL in a filter is 400', async (t) => {
  const { org, key } = await cluster.org();
  await add(org.id, 'x.png', { tags: ['x'] });
  for (const id of ['not-a-uuid', '123', '%00', 'a%00b', `${'f'.repeat(5000)}`, '00000000-0000-7000-8000-00000000000G']) {
    for (const method of ['GET', 'DELETE']) {
      const r = await cluster.api(method, `/api/uploads/files/${id}`, { key });
      t.is(r.status, 404, `${method} ${id.slice(0, 20)}`);
      t.is(r.body.message, 'File not found');
    }
  }
  const nul = await cluster.api('GET', '/api/uploads/files?tags=a%00', { key });
  t.is(nul.status, 400);
  t.is(typeof nul.body.message, 'string');
});

test('list: a repeated limit or offset gets the contract message too', async (t) => {
  const { key } = await cluster.org();
  const limit = await cluster.api('GET', '/api/uploads/files?limit=10&limit=20', { key });
  t.is(limit.status, 400);
  t.is(limit.body.message, 'Limit must be between 1 and 100');
  const offset = await cluster.api('GET', '/api/uploads/files?offset=1&offset=2', { key });
  t.is(offset.status, 400);
  t.is(offset.body.message, 'Offset must be a non-negative number');
});

test('a method a files path does not have is a JSON error', async (t) => {
  const { key } = await cluster.org();
  const r = await cluster.api('POST', '/api/uploads/files', { key, body: {} });
  t.is(r.status, 405);
  t.is(r.body.error, 'Method Not Allowed');
  t.is(typeof r.body.message, 'string');
});

test('organization rules on every files route: 401, 400 Organization ID is required, 403 mismatch', async (t) => {
  const a = await cluster.org();
  const b = await cluster.org();
  const file = await add(a.org.id, 'x.png');
  const user = await createUser(cluster.app.db, { email: `files-${Date.now()}@example.com`, organizationId: a.org.id });
  const token = await cluster.app.signer.issue(user.id);
  const routes: Array<[string, string]> = [
    ['GET', '/api/uploads'],
    ['GET', '/api/uploads/files'],
    ['GET', `/api/uploads/files/${file.id}`],
    ['DELETE', `/api/uploads/files/${file.id}`],
  ];
  for (const [method, url] of routes) {
    const anon = await cluster.api(method, url);
    t.is(anon.status, 401, `${method} ${url}`);
    t.is(anon.body.error, 'Unauthorized');
    const noOrg = await cluster.api(method, url, { headers: { authorization: `Bearer ${token}` } });
    t.is(noOrg.status, 400, `${method} ${url}`);
    t.is(noOrg.body.message, 'Organization ID is required');
    const mismatch = await cluster.api(method, `${url}?organizationId=${b.org.id}`, { key: a.key });
    t.is(mismatch.status, 403, `${method} ${url}`);
    t.regex(mismatch.body.message, /API key is bound to a different organization/);
    const notMember = await cluster.api(method, `${url}?organizationId=${b.org.id}`, { headers: { authorization: `Bearer ${token}` } });
    t.is(notMember.status, 403, `${method} ${url}`);
  }
  const asUser = await cluster.api('GET', `/api/uploads/files/${file.id}?organizationId=${a.org.id}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  t.is(asUser.status, 200);
  const sameOrg = await cluster.api('GET', `/api/uploads/files?organizationId=${a.org.id}`, { key: a.key });
  t.is(sameOrg.status, 200);
});

test('delete removes the row and the objects and gives back exactly the bytes', async (t) => {
  const { org, key } = await cluster.org();
  const keep = await add(org.id, 'keep.bin', { bytes: 5000 });
  const video = await makeTestVideo(path.join(cluster.dataDir, 'del.mp4'), { seconds: 1 });
  const gone = await addFileFromPath(cluster.app, org.id, video);
  t.truthy(gone.thumbnailKey);
  const before = await usedBytes(org.id);
  const r = await cluster.api('DELETE', `/api/uploads/files/${gone.id}`, { key });
  t.is(r.status, 200);
  t.deepEqual(r.body, { id: gone.id, deleted: true });
  t.is(await usedBytes(org.id), before - gone.sizeBytes);
  t.is(await cluster.app.store.stat(gone.objectKey), null);
  t.is(await cluster.app.store.stat(gone.thumbnailKey!), null);
  t.is((await cluster.api('GET', `/api/uploads/files/${gone.id}`, { key })).status, 404);
  t.is((await cluster.api('DELETE', `/api/uploads/files/${gone.id}`, { key })).status, 404);
  t.truthy(await cluster.app.store.stat(keep.objectKey));
  t.is(await usedBytes(org.id), 5000);
});

// Serial: the failing store is the app's for a moment, and another test's clean-up must not meet it.
test.serial('delete with a failing object store: the row and usage go, the objects are left to the orphan sweep', async (t) => {
  const { org, key } = await cluster.org();
  const file = await add(org.id, 'stuck.bin', { bytes: 777 });
  const real = cluster.app.store;
  const failing: ObjectStore = Object.assign(Object.create(real), {
    delete: async () => {
      throw new Error('EACCES: permission denied, unlink /secret/path');
    },
  });
  cluster.app.store = failing;
  try {
    const r = await cluster.api('DELETE', `/api/uploads/files/${file.id}`, { key });
    t.is(r.status, 200);
    t.deepEqual(r.body, { id: file.id, deleted: true });
  } finally {
    cluster.app.store = real;
  }
  t.is((await cluster.api('GET', `/api/uploads/files/${file.id}`, { key })).status, 404);
  t.is(await usedBytes(org.id), 0);
  t.truthy(await real.stat(file.objectKey), 'the object waits for the sweep');
});

test('delete whose commit fails keeps the row and its objects (objects go only after the commit)', async (t) => {
  const { org, key } = await cluster.org();
  const video = await makeTestVideo(path.join(cluster.dataDir, 'commit-fails.mp4'), { seconds: 1 });
  const file = await addFileFromPath(cluster.app, org.id, video);
  // A deferred constraint trigger raises at COMMIT, after every statement of the delete succeeded.
  await cluster.app.db.query(
    `CREATE OR REPLACE FUNCTION test_refuse_commit() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'commit refused'; END $$ LANGUAGE plpgsql`,
  );
  await cluster.app.db.query(`DROP TRIGGER IF EXISTS test_refuse_delete ON files`);
  await cluster.app.db.query(`CREATE CONSTRAINT TRIGGER test_refuse_delete AFTER DELETE ON files DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (OLD.id = '${file.id}') EXECUTE FUNCTION test_refuse_commit()`);
  try {
    const before = await usedBytes(org.id);
    const r = await cluster.api('DELETE', `/api/uploads/files/${file.id}`, { key });
    t.is(r.status, 500);
    t.is((await cluster.api('GET', `/api/uploads/files/${file.id}`, { key })).status, 200);
    t.is(await usedBytes(org.id), before);
    t.truthy(await cluster.app.store.stat(file.objectKey), 'the video is still stored');
    t.truthy(await cluster.app.store.stat(file.thumbnailKey!), 'the thumbnail is still stored');
  } finally {
    await cluster.app.db.query(`DROP TRIGGER IF EXISTS test_refuse_delete ON files`);
  }
});

// Serial: a sweep "two days from now" would take other tests' objects between their put and their row.
test.serial('the orphan sweeper removes old objects no row knows, and nothing else', async (t) => {
  const { org } = await cluster.org();
  const { sweepStorage } = await import('../coordinator/src/files/orphan-sweep.js');
  const known = await add(org.id, 'known.png');
  const orphan = `orgs/${org.id}/files/lost/orphan.bin`;
  await cluster.app.store.put(orphan, Buffer.from('nobody knows me'));
  const running = '00000000-0000-7000-8000-00000000abcd';
  await cluster.app.db.query(`INSERT INTO tasks (id, type, organization_id, state) VALUES ($1, 'analyze-video', $2, 'leased')`, [
    running,
    org.id,
  ]);
  const inFlight = `orgs/${org.id}/tasks/${running}/source.mp4`;
  await cluster.app.store.put(inFlight, Buffer.from('uploading'));

  const young = await sweepStorage(cluster.app, new Date());
  t.is(young.deleted, 0, 'fresh objects are never taken');
  const later = await sweepStorage(cluster.app, new Date(Date.now() + 2 * 86_400_000));
  t.true(later.deleted >= 1);
  t.is(await cluster.app.store.stat(orphan), null);
  t.truthy(await cluster.app.store.stat(known.objectKey));
  t.truthy(await cluster.app.store.stat(inFlight));
});

// Issue 36 item 7: a render's chunks wait for its join, which may wait a day for a free agent.
test.serial("the orphan sweep keeps a finished child's objects while its parent is unfinished, and takes them after", async (t) => {
  const { org } = await cluster.org();
  const { sweepStorage } = await import('../coordinator/src/files/orphan-sweep.js');
  const parent = '00000000-0000-7000-8000-00000000bc01';
  const chunks = ['00000000-0000-7000-8000-00000000bc02', '00000000-0000-7000-8000-00000000bc03'];
  // The render split into two chunks: one rendered and stored, one still running.
  await cluster.app.db.query(
    `INSERT INTO tasks (id, type, organization_id, state, children_pending) VALUES ($1, 'render-short', $2, 'waiting', 1)`,
    [parent, org.id],
  );
  await cluster.app.db.query(
    `INSERT INTO tasks (id, type, organization_id, state, parent_id, child_index) VALUES ($1, 'render-chunk', $3, 'completed', $4, 0),
       ($2, 'render-chunk', $3, 'leased', $4, 1)`,
    [...chunks, org.id, parent],
  );
  const chunk = `orgs/${org.id}/tasks/${chunks[0]}/chunk.mp4`;
  const sound = `orgs/${org.id}/tasks/${chunks[0]}/sound.m4a`;
  for (const key of [chunk, sound]) await cluster.app.store.put(key, Buffer.from('rendered'));
  const twoDaysOn = () => sweepStorage(cluster.app, new Date(Date.now() + 2 * 86_400_000));

  await twoDaysOn();
  t.truthy(await cluster.app.store.stat(chunk), 'kept while its parent waits for its sibling');
  // Both chunks done, the join queued with no agent free for a day.
  await cluster.app.db.query(`UPDATE tasks SET state = 'completed' WHERE id = $1`, [chunks[1]]);
  await cluster.app.db.query(`UPDATE tasks SET state = 'queued', children_pending = 0 WHERE id = $1`, [parent]);
  await twoDaysOn();
  t.truthy(await cluster.app.store.stat(chunk), 'kept while the join waits in the queue');
  t.truthy(await cluster.app.store.stat(sound));
  await cluster.app.db.query(`UPDATE tasks SET state = 'leased' WHERE id = $1`, [parent]);
  await twoDaysOn();
  t.truthy(await cluster.app.store.stat(chunk), 'kept while the join runs');

  // The render done (and its clean-up lost): nothing keeps them now.
  await cluster.app.db.query(`UPDATE tasks SET state = 'completed' WHERE id = $1`, [parent]);
  await twoDaysOn();
  t.is(await cluster.app.store.stat(chunk), null);
  t.is(await cluster.app.store.stat(sound), null);
});

test('stored objects are served so that none can run as a page of this origin', async (t) => {
  const { org, key } = await cluster.org();
  const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.cookie)</script></svg>');
  const stored = await storeFile(cluster.app, { organizationId: org.id, name: 'logo.svg', source: svg, type: 'image' });
  const r = await cluster.api('GET', `/api/uploads/files/${stored.id}`, { key });
  for (const [method, range] of [
    ['GET', undefined],
    ['HEAD', undefined],
    ['GET', 'bytes=0-9'],
  ] as const) {
    const res = await fetch(r.body.url, { method, headers: range ? { range } : {} });
    t.true(res.ok, `${method} ${range ?? ''}`);
    t.is(res.headers.get('x-content-type-options'), 'nosniff');
    const csp = res.headers.get('content-security-policy') ?? '';
    t.regex(csp, /(^|;)\s*sandbox\s*(;|$)/, `${method}: scripts never run, the origin is opaque`);
    t.regex(csp, /default-src 'none'/);
    await res.arrayBuffer();
  }
});

test('a malformed %-escape in an /objects/ path is a 400 JSON error, not a 500', async (t) => {
  for (const p of ['/objects/orgs/%E0%A4%A/x.mp4?exp=1&sig=x', '/objects/%/x', '/objects/a%zz']) {
    const r = await cluster.api('GET', p);
    t.is(r.status, 400, p);
    t.truthy(r.body.error && r.body.message, p);
  }
});
