// The agent's cache of stored objects (node-agent/src/tasks/object-cache.ts), against a real
// coordinator's object store and its signed URLs: a job's later tasks on a host take its source
// from the disk, a key stored again is fetched again, and the cache stays within its bounds.
import test from 'ava';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@shorts/common/logger';
import { StoredObjectCache } from '../node-agent/src/tasks/object-cache.js';
import { startCluster, type TestCluster } from './helpers/cluster.js';

let cluster: TestCluster;
/** Every read of the store: key and range. */
const reads: Array<{ key: string; range?: { start: number; end?: number } }> = [];

test.before(async () => {
  cluster = await startCluster('agent_object_cache');
  const store = cluster.app.store;
  const get = store.get.bind(store);
  store.get = async (key, range) => {
    reads.push({ key, range });
    return get(key, range);
  };
});
const scratchDirs: string[] = [];
test.after.always(async () => {
  await cluster?.close();
  for (const dir of scratchDirs) await rm(dir, { recursive: true, force: true });
});

const log = createLogger({ service: 'test' }, 'silent');
const signed = async (key: string) => (await cluster.app.urls.sign(key, 'GET', 600)).url;
const bytes = (n: number, fill: number) => Buffer.alloc(n, fill);

async function scratch(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'object-cache-'));
  scratchDirs.push(dir);
  return dir;
}

test.serial('a stored object is downloaded once per host; later reads take the disk copy after a one-byte size check', async (t) => {
  const dir = await scratch();
  const cache = new StoredObjectCache(path.join(dir, 'cache'), 1e9, log);
  const key = 'orgs/o1/tasks/t1/source.mp4';
  await cluster.app.store.put(key, bytes(200_000, 7));
  const url = await signed(key);
  reads.length = 0;

  const first = await cache.fetch(key, url, path.join(dir, 'a.mp4'), new AbortController().signal);
  const second = await cache.fetch(key, url, path.join(dir, 'b.mp4'), new AbortController().signal);
  t.deepEqual(
    [first, second],
    [
      { bytes: 200_000, cached: false },
      { bytes: 200_000, cached: true },
    ],
  );
  t.deepEqual(await readFile(path.join(dir, 'b.mp4')), bytes(200_000, 7));
  t.deepEqual(
    reads.map((r) => r.range),
    [undefined, { start: 0, end: 0 }],
    'one whole read, then only the size check',
  );

  // The same key stored again (a retried task's new copy) with another length: fetched again.
  await cluster.app.store.put(key, bytes(150_000, 9));
  const third = await cache.fetch(key, await signed(key), path.join(dir, 'c.mp4'), new AbortController().signal);
  t.deepEqual(third, { bytes: 150_000, cached: false });
  t.deepEqual(await readFile(path.join(dir, 'c.mp4')), bytes(150_000, 9));
  // The earlier task's copy is its own: unchanged by the new one.
  t.deepEqual(await readFile(path.join(dir, 'b.mp4')), bytes(200_000, 7));
});

test.serial('a file a task stored is kept for the next task on the host, which reads nothing of it from the store', async (t) => {
  const dir = await scratch();
  const cache = new StoredObjectCache(path.join(dir, 'cache'), 1e9, log);
  const key = 'orgs/o1/tasks/t2/source.mp4';
  const local = path.join(dir, 'made.mp4');
  await writeFile(local, bytes(50_000, 3));
  await cluster.app.store.put(key, bytes(50_000, 3));
  await cache.keep(key, local);
  reads.length = 0;
  const got = await cache.fetch(key, await signed(key), path.join(dir, 'used.mp4'), new AbortController().signal);
  t.deepEqual(got, { bytes: 50_000, cached: true });
  t.deepEqual(
    reads.map((r) => r.range),
    [{ start: 0, end: 0 }],
  );
  t.deepEqual(await readFile(path.join(dir, 'used.mp4')), bytes(50_000, 3));
});

test.serial('the cache keeps within its size: the least recently used object goes first, and a task keeps its own copy', async (t) => {
  const dir = await scratch();
  const cacheDir = path.join(dir, 'cache');
  const cache = new StoredObjectCache(cacheDir, 250_000, log);
  const keys = ['orgs/o1/tasks/t3/a.mp4', 'orgs/o1/tasks/t3/b.mp4', 'orgs/o1/tasks/t3/c.mp4'];
  for (const [i, key] of keys.entries()) await cluster.app.store.put(key, bytes(100_000, i + 1));
  const signal = new AbortController().signal;
  await cache.fetch(keys[0]!, await signed(keys[0]!), path.join(dir, 'a'), signal);
  await new Promise((r) => setTimeout(r, 20));
  await cache.fetch(keys[1]!, await signed(keys[1]!), path.join(dir, 'b'), signal);
  await new Promise((r) => setTimeout(r, 20));
  // a is used again: b is now the least recently used.
  t.true((await cache.fetch(keys[0]!, await signed(keys[0]!), path.join(dir, 'a2'), signal)).cached);
  await new Promise((r) => setTimeout(r, 20));
  await cache.fetch(keys[2]!, await signed(keys[2]!), path.join(dir, 'c'), signal);
  t.is((await readdir(cacheDir)).length, 2, 'two of 100 kB fit in 250 kB');
  t.true((await cache.fetch(keys[0]!, await signed(keys[0]!), path.join(dir, 'a3'), signal)).cached, 'a was used lately');
  t.false((await cache.fetch(keys[1]!, await signed(keys[1]!), path.join(dir, 'b2'), signal)).cached, 'b went first');
  // The task that read b before it was evicted still has all of it.
  t.deepEqual(await readFile(path.join(dir, 'b')), bytes(100_000, 2));
});

test.serial(
  'a short-lived object (a chunk for its join) goes before any other, and a forgotten one is read from the store again',
  async (t) => {
    const dir = await scratch();
    const cacheDir = path.join(dir, 'cache');
    const cache = new StoredObjectCache(cacheDir, 250_000, log);
    const signal = new AbortController().signal;
    const [source, chunk, other] = ['orgs/o1/tasks/t5/source.mp4', 'orgs/o1/tasks/t6/chunk-0.mp4', 'orgs/o1/tasks/t7/render.mp4'];
    for (const [i, key] of [source, chunk, other].entries()) await cluster.app.store.put(key, bytes(100_000, i + 1));
    await cache.fetch(source, await signed(source), path.join(dir, 'source'), signal);
    await new Promise((r) => setTimeout(r, 20));
    // Made here after the source was read: by use alone, the source would be evicted first.
    await writeFile(path.join(dir, 'chunk'), bytes(100_000, 2));
    await cache.keep(chunk, path.join(dir, 'chunk'), { shortLived: true });
    await cache.fetch(other, await signed(other), path.join(dir, 'other'), signal);
    t.true((await cache.fetch(source, await signed(source), path.join(dir, 'source2'), signal)).cached, 'the source stayed');
    t.false((await cache.fetch(chunk, await signed(chunk), path.join(dir, 'chunk2'), signal)).cached, 'the chunk went first');

    // Fetched again, the chunk is kept; forgotten, it is gone from the disk and read again.
    await cache.forget(chunk);
    reads.length = 0;
    t.false((await cache.fetch(chunk, await signed(chunk), path.join(dir, 'chunk3'), signal)).cached);
    t.deepEqual(
      reads.map((r) => r.range),
      [undefined],
      'one whole read: no copy left to check the size of',
    );
    t.deepEqual(await readFile(path.join(dir, 'chunk3')), bytes(100_000, 2));
    await t.notThrowsAsync(cache.forget('orgs/o1/tasks/t8/never-kept.mp4'), 'forgetting what is not there is no error');
  },
);

test.serial('a cache of size 0 keeps nothing and always downloads', async (t) => {
  const dir = await scratch();
  const cache = new StoredObjectCache(path.join(dir, 'cache'), 0, log);
  const key = 'orgs/o1/tasks/t4/source.mp4';
  await cluster.app.store.put(key, bytes(10_000, 5));
  const signal = new AbortController().signal;
  const results = [];
  for (const name of ['x', 'y']) results.push((await cache.fetch(key, await signed(key), path.join(dir, name), signal)).cached);
  t.deepEqual(results, [false, false]);
});
