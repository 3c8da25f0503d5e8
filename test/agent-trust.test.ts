import test, { type ExecutionContext } from 'ava';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { FakeAgent } from './helpers/fake-agent.js';
import { leaseRender as leaseRenderOf } from './helpers/render-lease.js';
import { storeFile } from '../coordinator/src/files/store-file.js';
import { taskObjectKey } from '../coordinator/src/tasks/task-queue.js';

// A rogue agent (it holds the cluster token, so it can lease) must not attach another
// organization's object to its own rows, nor lie about sizes to dodge the storage quota.
let cluster: TestCluster;
let agent: FakeAgent;

test.before(async () => {
  cluster = await startCluster('agent_trust');
  agent = await new FakeAgent(cluster.app.grpcAddress, undefined, 'rogue').register(['render-short', 'analyze-video']);
});
test.after.always(async () => {
  agent?.close();
  await cluster?.close();
});

async function upload(task: { task_id: string; lease_token: string }, name: string, bytes: Buffer): Promise<string> {
  const res = await agent.uploadUrl(task, name);
  const put = await fetch(res.url, { method: 'PUT', body: new Uint8Array(bytes), headers: { 'content-type': 'application/octet-stream' } });
  if (put.status !== 201) throw new Error(`upload answered ${put.status}`);
  return res.object_key;
}

/**
 * An object of a name the task does not write: no upload URL is signed for it, so it is planted in
 * the store under the task's prefix directly (as a bug elsewhere, or an older coordinator, might
 * leave it), to show that reporting it is refused too.
 */
async function plantUnexpected(
  t: ExecutionContext,
  task: { task_id: string; lease_token: string },
  organizationId: string,
  name: string,
  bytes: Buffer,
): Promise<string> {
  const err = await t.throwsAsync(agent.uploadUrl(task, name));
  t.regex(err!.message, /does not write an object named/, name);
  const key = taskObjectKey({ id: task.task_id, organizationId }, name);
  await cluster.app.store.put(key, bytes, { contentType: 'application/octet-stream' });
  return key;
}

const leaseRender = () => leaseRenderOf(cluster, agent);

const renderRow = (id: string) =>
  cluster.app.db.one<{ status: string; error_message: string | null; file_id: string | null; size_bytes: string | null }>(
    'SELECT status, error_message, file_id, size_bytes FROM renders WHERE id = $1',
    [id],
  );

test.serial("a render result naming another organization's object is refused; the object stays theirs", async (t) => {
  const victim = await cluster.org({ plan: 'pro' });
  const theirs = await storeFile(cluster.app, {
    organizationId: victim.org.id,
    name: 'secret.bin',
    source: Buffer.alloc(3000, 7),
    type: 'video',
  });
  const { org, renderId, task } = await leaseRender();
  const thumb = await upload(task, 'render.jpg', Buffer.from('jpeg'));
  await agent.complete(task.task_id, task.lease_token, {
    objectKey: theirs.objectKey,
    sizeBytes: 1,
    contentType: 'video/mp4',
    durationSec: 2,
    thumbnailKey: thumb,
  });
  const row = await renderRow(renderId);
  t.is(row!.status, 'error');
  t.regex(row!.error_message!, /outside its task/);
  t.is(
    (await cluster.app.db.one<{ n: number }>('SELECT count(*)::int AS n FROM files WHERE organization_id = $1 AND object_key = $2', [
      org.id,
      theirs.objectKey,
    ]))!.n,
    0,
  );
  t.truthy(await cluster.app.store.stat(theirs.objectKey), "the victim's object is untouched");
});

test.serial("a render result's size is read from the store, not from the agent", async (t) => {
  const { org, renderId, task } = await leaseRender();
  const video = await upload(task, 'render.mp4', Buffer.alloc(54_321, 1));
  const thumb = await upload(task, 'render.jpg', Buffer.alloc(100, 2));
  const before = Number(
    (await cluster.app.db.one<{ n: number }>('SELECT storage_used_bytes AS n FROM organizations WHERE id = $1', [org.id]))!.n,
  );
  await agent.complete(task.task_id, task.lease_token, {
    objectKey: video,
    sizeBytes: 1,
    contentType: 'video/mp4',
    durationSec: 2,
    thumbnailKey: thumb,
  });
  const row = await renderRow(renderId);
  t.is(row!.status, 'done');
  t.is(Number(row!.size_bytes), 54_321);
  const file = await cluster.app.db.one<{ size_bytes: string }>('SELECT size_bytes FROM files WHERE id = $1', [row!.file_id]);
  t.is(Number(file!.size_bytes), 54_321);
  t.is(
    Number((await cluster.app.db.one<{ n: number }>('SELECT storage_used_bytes AS n FROM organizations WHERE id = $1', [org.id]))!.n),
    before + 54_321,
  );
});

test.serial('a render result reusing one object as video and thumbnail, or naming one never uploaded, is refused', async (t) => {
  {
    const { renderId, task } = await leaseRender();
    const video = await upload(task, 'render.mp4', Buffer.alloc(500, 1));
    await agent.complete(task.task_id, task.lease_token, {
      objectKey: video,
      sizeBytes: 500,
      contentType: 'video/mp4',
      durationSec: 2,
      thumbnailKey: video,
    });
    const row = await renderRow(renderId);
    t.is(row!.status, 'error');
    t.regex(row!.error_message!, /twice/);
  }
  {
    const { org, renderId, task } = await leaseRender();
    await agent.complete(task.task_id, task.lease_token, {
      objectKey: `orgs/${org.id}/tasks/${task.task_id}/render-never.mp4`,
      sizeBytes: 500,
      contentType: 'video/mp4',
      durationSec: 2,
    });
    const row = await renderRow(renderId);
    t.is(row!.status, 'error');
    t.regex(row!.error_message!, /never uploaded/);
  }
});

test.serial("an analyze result naming another organization's object fails the job and charges nothing", async (t) => {
  const victim = await cluster.org({ plan: 'pro' });
  const theirs = await storeFile(cluster.app, {
    organizationId: victim.org.id,
    name: 'talk.mp4',
    source: Buffer.alloc(4000, 3),
    type: 'video',
  });
  const { org, key } = await cluster.org({ plan: 'pro', credits: 10 });
  const created = await cluster.api('POST', '/api/jobs', {
    key,
    body: { functionName: 'VideoShorts', fileUrl: 'https://example.com/talk.mp4' },
  });
  t.is(created.status, 201);
  const task = (await agent.lease(3000))!;
  t.is(task.type, 'analyze-video');
  await agent.complete(task.task_id, task.lease_token, {
    durationSec: 10,
    downloadBytes: 4000,
    source: {
      name: 'talk.mp4',
      objectKey: theirs.objectKey,
      sizeBytes: 4000,
      contentType: 'video/mp4',
      thumbnailKey: null,
      width: 320,
      height: 180,
    },
    transcript: { language: 'en', text: '', words: [], backend: 'test' },
    shorts: [],
  });
  const job = await cluster.api('GET', `/api/jobs/${created.body.id}`, { key });
  t.is(job.body.status, 'FAILED');
  t.is((await cluster.app.db.one<{ n: number }>('SELECT count(*)::int AS n FROM files WHERE organization_id = $1', [org.id]))!.n, 0);
  t.truthy(await cluster.app.store.stat(theirs.objectKey));
});

test.serial('a render result naming a file a render does not write (an SVG, a page) is refused', async (t) => {
  for (const name of ['evil.svg', 'render.html']) {
    const { org, renderId, task } = await leaseRender();
    const video = await upload(task, 'render.mp4', Buffer.alloc(500, 1));
    const evil = await plantUnexpected(
      t,
      task,
      org.id,
      name,
      Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
    );
    await agent.complete(task.task_id, task.lease_token, {
      objectKey: video,
      sizeBytes: 500,
      contentType: 'video/mp4',
      durationSec: 2,
      thumbnailKey: evil,
    });
    const row = await renderRow(renderId);
    t.is(row!.status, 'error', name);
    t.regex(row!.error_message!, new RegExp(`that render-short does not write \\(${name.replace('.', '\\.')}\\)`), name);
    t.is(
      (await cluster.app.db.one<{ n: number }>('SELECT count(*)::int AS n FROM files WHERE organization_id = $1 AND object_key = ANY($2)', [
        org.id,
        [video, evil],
      ]))!.n,
      0,
      name,
    );
  }
});

test.serial('an analyze result naming a file analysis does not write fails the job and charges nothing', async (t) => {
  const { org, key } = await cluster.org({ plan: 'pro', credits: 10 });
  const created = await cluster.api('POST', '/api/jobs', {
    key,
    body: { functionName: 'VideoShorts', fileUrl: 'https://example.com/talk.mp4' },
  });
  t.is(created.status, 201);
  const task = (await agent.lease(3000))!;
  t.is(task.type, 'analyze-video');
  const source = await upload(task, 'source.mp4', Buffer.alloc(4000, 3));
  const thumb = await plantUnexpected(t, task, org.id, 'source-thumb.svg', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'));
  await agent.complete(task.task_id, task.lease_token, {
    durationSec: 10,
    downloadBytes: 4000,
    source: {
      name: 'talk.mp4',
      objectKey: source,
      sizeBytes: 4000,
      contentType: 'video/mp4',
      thumbnailKey: thumb,
      width: 320,
      height: 180,
    },
    transcript: { language: 'en', text: '', words: [], backend: 'test' },
    shorts: [],
  });
  const job = await cluster.api('GET', `/api/jobs/${created.body.id}`, { key });
  t.is(job.body.status, 'FAILED');
  t.regex(JSON.stringify(job.body), /that analyze-video does not write \(source-thumb\.svg\)/);
  t.is((await cluster.app.db.one<{ n: number }>('SELECT count(*)::int AS n FROM files WHERE organization_id = $1', [org.id]))!.n, 0);
  t.is(Number((await cluster.app.db.one<{ n: string }>('SELECT credits AS n FROM organizations WHERE id = $1', [org.id]))!.n), 10);
});

test.serial('upload names are plain file names: no path steps, no dot names', async (t) => {
  const { task } = await leaseRender();
  for (const name of ['..', '.', '.hidden', '../x', 'a/b', '']) {
    await t.throwsAsync(
      agent.client.call('CreateUploadUrl', { task_id: task.task_id, lease_token: task.lease_token, name }, { retryForMs: 0 }),
      undefined,
      JSON.stringify(name),
    );
  }
  t.truthy(await upload(task, 'render.mp4', Buffer.from('ok')));
});
