import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { FakeAgent, type LeasedTask } from './helpers/fake-agent.js';
import { leaseRender as leaseRenderOf } from './helpers/render-lease.js';
import { taskObjectPrefix } from '../coordinator/src/tasks/task-queue.js';

// An agent's upload URL is bound to its task's lease and to a size, and writes once: once the task
// has finished, failed, been cancelled or leased again, the URL stores nothing; an object a PUT has
// written cannot be replaced through it (nor through another URL of that lease), while a PUT that
// broke off may be tried again; and a chunked PUT (no Content-Length) is cut off at the limit.
let cluster: TestCluster;
let agent: FakeAgent;
// The same rules with the S3 backend (s3rver), where the move into place is a copy in the service.
let s3: { cluster: TestCluster; agent: FakeAgent; server: S3rver; dir: string };
const VIDEO_LIMIT = 100_000;

test.before(async () => {
  cluster = await startCluster('agent_upload_urls', { agentUploadMaxBytes: VIDEO_LIMIT });
  agent = await new FakeAgent(cluster.app.grpcAddress, undefined, 'uploader').register(['render-short']);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'upload-s3rver-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', directory: dir, silent: true, configureBuckets: [{ name: 'shorts' }] });
  const { port } = await server.run();
  const s3Cluster = await startCluster('agent_upload_urls_s3', {
    agentUploadMaxBytes: VIDEO_LIMIT,
    storage: 's3',
    s3Endpoint: `http://127.0.0.1:${port}`,
    s3Bucket: 'shorts',
    s3AccessKeyId: 'S3RVER',
    s3SecretAccessKey: 'S3RVER',
  });
  s3 = {
    cluster: s3Cluster,
    agent: await new FakeAgent(s3Cluster.app.grpcAddress, undefined, 'uploader-s3').register(['render-short']),
    server,
    dir,
  };
});
test.after.always(async () => {
  agent?.close();
  s3?.agent.close();
  await Promise.all([cluster?.close(), s3?.cluster.close()]);
  await s3?.server.close();
  if (s3) await rm(s3.dir, { recursive: true, force: true });
});

// Of the cluster and agent the test works with now (the S3 one swaps them in).
const leaseRender = () => leaseRenderOf(cluster, agent);
const uploadUrl = (task: LeasedTask, name: string) => agent.uploadUrl(task, name);

const put = async (url: string, body: string | Buffer | ReadableStream<Uint8Array>, headers: Record<string, string> = {}) => {
  const res = await fetch(url, {
    method: 'PUT',
    body: typeof body === 'string' || Buffer.isBuffer(body) ? new Uint8Array(Buffer.from(body)) : body,
    headers,
    duplex: 'half',
  } as RequestInit);
  return { status: res.status, body: (await res.json().catch(() => null)) as { error?: string; message?: string } | null };
};

const stored = async (key: string) => {
  const info = await cluster.app.store.stat(key);
  if (!info) return null;
  const chunks: Buffer[] = [];
  for await (const c of (await cluster.app.store.get(key)).stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString();
};

const keysUnder = async (prefix: string) => {
  const keys: string[] = [];
  for await (const o of cluster.app.store.list(prefix)) keys.push(o.key);
  return keys.sort();
};

/** Waits (briefly) for the keys under `prefix` to be these: a broken PUT's cleanup runs after the client gave up. */
const waitForKeys = async (prefix: string, want: string[]) => {
  for (let i = 0; i < 50 && JSON.stringify(await keysUnder(prefix)) !== JSON.stringify(want); i++)
    await new Promise((r) => setTimeout(r, 100));
  return keysUnder(prefix);
};

/** A body sent in chunks with no Content-Length (Transfer-Encoding: chunked). */
const chunked = (chunks: number, size: number) => {
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent++ >= chunks) controller.close();
      else controller.enqueue(new Uint8Array(size).fill(7));
    },
  });
};

/** A body that sends `first` and then breaks off, as a connection that drops mid-upload. */
const breaksOff = (first: string) => {
  let sent = false;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent) return controller.error(new Error('the connection dropped'));
      sent = true;
      controller.enqueue(Buffer.from(first));
    },
  });
};

test.serial(
  'an upload URL writes once: a PUT that broke off may be retried, a second PUT after one that completed is a 409 and the object stays as written',
  async (t) => {
    const { task } = await leaseRender();
    const video = await uploadUrl(task, 'render.mp4');
    const prefix = video.object_key.slice(0, video.object_key.lastIndexOf('/') + 1);
    // A PUT that breaks off records nothing: neither the object nor a staging part is left.
    await t.throwsAsync(put(video.url, breaksOff('half a short')));
    t.deepEqual(await waitForKeys(prefix, []), []);
    t.is((await put(video.url, 'the short')).status, 201, 'the retry after the broken PUT is taken');
    t.is(await stored(video.object_key), 'the short');

    for (const body of ['replaced', '']) {
      const again = await put(video.url, body);
      t.is(again.status, 409);
      t.is(again.body!.error, 'Conflict');
      t.regex(again.body!.message!, /already written through an upload URL of this lease; an upload URL writes once/);
    }
    // Another URL signed under the same lease for the same object is no way round it.
    const resigned = await uploadUrl(task, 'render.mp4');
    t.is((await put(resigned.url, 'replaced')).status, 409);
    t.is(await stored(video.object_key), 'the short');
    t.deepEqual(await keysUnder(prefix), [video.object_key], 'no staging part left behind');

    // Two PUTs racing on a fresh object: one is stored whole, the other refused.
    const thumb = await uploadUrl(task, 'render.jpg');
    const raced = await Promise.all(['jpeg one', 'jpeg two'].map((body) => put(thumb.url, body)));
    t.deepEqual(raced.map((r) => r.status).sort(), [201, 409]);
    t.is(await stored(thumb.object_key), raced[0]!.status === 201 ? 'jpeg one' : 'jpeg two');
    t.deepEqual(await keysUnder(prefix), [thumb.object_key, video.object_key].sort());
  },
);

test.serial('a finished short cannot be overwritten: after completion the URL answers 410', async (t) => {
  const { renderId, task } = await leaseRender();
  const video = await uploadUrl(task, 'render.mp4');
  const thumb = await uploadUrl(task, 'render.jpg');
  t.is((await put(video.url, 'the short')).status, 201);
  t.is((await put(thumb.url, 'jpeg')).status, 201);
  await agent.complete(task.task_id, task.lease_token, {
    objectKey: video.object_key,
    sizeBytes: 9,
    contentType: 'video/mp4',
    durationSec: 2,
    thumbnailKey: thumb.object_key,
  });
  const row = await cluster.app.db.one<{ status: string; size_bytes: string }>('SELECT status, size_bytes FROM renders WHERE id = $1', [
    renderId,
  ]);
  t.is(row!.status, 'done');

  for (const body of ['replaced', '']) {
    const again = await put(video.url, body);
    t.is(again.status, 410);
    t.regex(again.body!.message!, /has completed; its results can no longer be replaced/);
  }
  t.is(await stored(video.object_key), 'the short');
  t.is(Number(row!.size_bytes), 'the short'.length);
  t.deepEqual(
    await keysUnder(taskObjectPrefix({ id: task.task_id, organizationId: (await cluster.app.queue.get(task.task_id))!.organizationId })),
    [thumb.object_key, video.object_key].sort(),
    'no staging object left behind',
  );
});

test.serial('a PUT that was streaming while the task completed is refused at its end (410): nothing of it is stored', async (t) => {
  const { task } = await leaseRender();
  const video = await uploadUrl(task, 'render.mp4');
  const thumb = await uploadUrl(task, 'render.jpg');
  // An object of the task not yet written, whose PUT is past its lease check when the task completes.
  const extra = await uploadUrl(task, 'render-extra.mp4');
  t.is((await put(video.url, 'the short')).status, 201);
  t.is((await put(thumb.url, 'jpeg')).status, 201);
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let step = 0;
  const slow = new ReadableStream<Uint8Array>({
    async pull(c) {
      if (step++ === 0) return c.enqueue(Buffer.from('late '));
      await held;
      c.enqueue(Buffer.from('bytes'));
      c.close();
    },
  });
  const late = put(extra.url, slow);
  await new Promise((r) => setTimeout(r, 200)); // the PUT is past its lease check, streaming
  await agent.complete(task.task_id, task.lease_token, {
    objectKey: video.object_key,
    sizeBytes: 9,
    contentType: 'video/mp4',
    durationSec: 2,
    thumbnailKey: thumb.object_key,
  });
  release();
  const res = await late;
  t.is(res.status, 410);
  t.is(await stored(extra.object_key), null);
  t.is(await stored(video.object_key), 'the short');
  const prefix = video.object_key.slice(0, video.object_key.lastIndexOf('/') + 1);
  t.deepEqual(await keysUnder(prefix), [thumb.object_key, video.object_key].sort(), 'its staging part is gone too');
});

test.serial('a URL signed for one lease is refused (410) once the task is leased again, and the new lease uploads', async (t) => {
  const { task } = await leaseRender();
  const stale = await uploadUrl(task, 'render.mp4');
  await agent.client.call('ReleaseTask', { task_id: task.task_id, lease_token: task.lease_token, reason: 'test' });
  const queued = await put(stale.url, 'from the released lease');
  t.is(queued.status, 410);
  t.regex(queued.body!.message!, /gone back to the queue/);
  const again = (await agent.lease(3000))!;
  t.is(again.task_id, task.task_id);
  const releasedAgain = await put(stale.url, 'from the released lease');
  t.is(releasedAgain.status, 410);
  t.regex(releasedAgain.body!.message!, /leased again since this upload URL was signed/);
  t.is(await stored(stale.object_key), null);
  const fresh = await uploadUrl(again, 'render.mp4');
  t.is((await put(fresh.url, 'new lease')).status, 201);
  t.is(await stored(fresh.object_key), 'new lease');
  await agent.fail(again.task_id, again.lease_token, 'test over', false);
  t.is((await put(fresh.url, 'after failure')).status, 410, 'a failed task takes no uploads either');
});

test.serial(
  "a chunked PUT over the task's limit is cut off with 413 and nothing is stored; a declared length over it is refused at once",
  async (t) => {
    const { task } = await leaseRender();
    const video = await uploadUrl(task, 'render.mp4');
    const prefix = video.object_key.slice(0, video.object_key.lastIndexOf('/') + 1);
    const over = await put(video.url, chunked(100, 65_536), { 'content-type': 'video/mp4' });
    t.is(over.status, 413);
    t.regex(over.body!.message!, new RegExp(`limited to ${VIDEO_LIMIT} bytes`));
    t.deepEqual(await keysUnder(prefix), [], 'neither the object nor a staging part');

    const declared = await put(video.url, Buffer.alloc(VIDEO_LIMIT + 1));
    t.is(declared.status, 413);
    t.deepEqual(await keysUnder(prefix), []);

    // Up to the limit, chunked or not, it is taken.
    t.is((await put(video.url, chunked(10, 10_000))).status, 201);
    t.is((await cluster.app.store.stat(video.object_key))?.size, VIDEO_LIMIT);
  },
);

test.serial('the lease and size in an upload URL are signed: changing either is a 403', async (t) => {
  const { task } = await leaseRender();
  const video = await uploadUrl(task, 'render.mp4');
  const raised = video.url.replace(`max=${VIDEO_LIMIT}`, `max=${VIDEO_LIMIT * 100}`);
  t.not(raised, video.url);
  t.is((await put(raised, 'x')).status, 403);
  const url = new URL(video.url);
  url.searchParams.delete('lease');
  t.is((await put(url.toString(), 'x')).status, 403);
  t.is(await cluster.app.store.stat(video.object_key), null);
});

test.serial(
  'with S3 storage: written once (409 for a second PUT), refused (410) after completion, chunked PUT past the limit 413 with nothing stored',
  async (t) => {
    const [c, a] = [cluster, agent];
    [cluster, agent] = [s3.cluster, s3.agent];
    try {
      const { renderId, task } = await leaseRender();
      const video = await uploadUrl(task, 'render.mp4');
      const thumb = await uploadUrl(task, 'render.jpg');
      const prefix = video.object_key.slice(0, video.object_key.lastIndexOf('/') + 1);
      t.is((await put(video.url, chunked(20, 10_000))).status, 413);
      t.deepEqual(await keysUnder(prefix), []);
      t.is((await put(video.url, 'the short')).status, 201, 'taken after the refused PUT');
      t.is((await put(video.url, 'replaced')).status, 409);
      t.is(await stored(video.object_key), 'the short');
      t.is((await put(thumb.url, 'jpeg')).status, 201);
      await agent.complete(task.task_id, task.lease_token, {
        objectKey: video.object_key,
        sizeBytes: 9,
        contentType: 'video/mp4',
        durationSec: 2,
        thumbnailKey: thumb.object_key,
      });
      t.is((await cluster.app.db.one<{ status: string }>('SELECT status FROM renders WHERE id = $1', [renderId]))!.status, 'done');
      t.is((await put(video.url, 'replaced')).status, 410);
      t.is(await stored(video.object_key), 'the short');
      t.deepEqual(await keysUnder(prefix), [thumb.object_key, video.object_key].sort());
    } finally {
      [cluster, agent] = [c, a];
    }
  },
);
