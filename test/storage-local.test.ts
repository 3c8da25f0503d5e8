import test from 'ava';
import http from 'node:http';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import Koa from 'koa';
import { LocalObjectStore } from '../coordinator/src/storage/local-store.js';
import { createObjectRoutes } from '../coordinator/src/storage/object-routes.js';
import { signObjectUrl } from '../coordinator/src/storage/signed-url.js';
import { sweepOrphans } from '../coordinator/src/storage/sweeper.js';
import { errorMiddleware } from '../coordinator/src/api/errors.js';
import { createLogger } from '@shorts/common/logger';
import { createMetrics } from '../coordinator/src/metrics/metrics.js';

const SECRET = 's'.repeat(40);
const text = async (s: Readable) => {
  const c: Buffer[] = [];
  for await (const x of s) c.push(x as Buffer);
  return Buffer.concat(c).toString();
};

async function setup() {
  const store = new LocalObjectStore(await mkdtemp(path.join(os.tmpdir(), 'store-')));
  const koa = new Koa();
  koa.use(errorMiddleware(createLogger({}, 'error'), createMetrics()));
  koa.use(createObjectRoutes({ store, secret: SECRET }));
  const handle = koa.callback();
  const server = http.createServer((req, res) => void handle(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const sign = (key: string, method: 'GET', inSec = 60) =>
    signObjectUrl(base, key, { method, expiresAt: new Date(Date.now() + inSec * 1000), secret: SECRET });
  return {
    store,
    sign,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

test('put, get, ranges, stat, list and delete', async (t) => {
  const { store, close } = await setup();
  t.deepEqual(await store.put('orgs/a/one.txt', Buffer.from('hello world')), { size: 11 });
  await store.put('orgs/a/two.txt', Readable.from([Buffer.from('abc')]));
  await store.put('orgs/b/three.txt', Buffer.from('x'));
  t.is(await text((await store.get('orgs/a/one.txt')).stream), 'hello world');
  t.is(await text((await store.get('orgs/a/one.txt', { start: 6, end: 10 })).stream), 'world');
  t.is((await store.stat('orgs/a/two.txt'))?.size, 3);
  t.is(await store.stat('orgs/a/missing'), null);
  const keys: string[] = [];
  for await (const o of store.list('orgs/a/')) keys.push(o.key);
  t.deepEqual(keys.sort(), ['orgs/a/one.txt', 'orgs/a/two.txt']);
  await store.delete('orgs/a/one.txt');
  t.is(await store.stat('orgs/a/one.txt'), null);
  await close();
});

test('keys cannot escape the root', async (t) => {
  const { store, close } = await setup();
  for (const key of ['../etc/passwd', '/abs', 'a/../../b', 'a//b', ''])
    await t.throwsAsync(store.put(key, Buffer.from('x')), undefined, key);
  await close();
});

test('signed URLs: GET with ranges, expired and tampered links refused, no upload without an upload gate', async (t) => {
  const { store, sign, close } = await setup();
  await store.put('v/clip.mp4', Buffer.from('0123456789'));
  const full = await fetch(sign('v/clip.mp4', 'GET'));
  t.is(full.status, 200);
  t.is(full.headers.get('accept-ranges'), 'bytes');
  t.is(full.headers.get('content-type'), 'video/mp4');
  t.is(await full.text(), '0123456789');
  const part = await fetch(sign('v/clip.mp4', 'GET'), { headers: { range: 'bytes=2-5' } });
  t.is(part.status, 206);
  t.is(part.headers.get('content-range'), 'bytes 2-5/10');
  t.is(await part.text(), '2345');
  t.is(await (await fetch(sign('v/clip.mp4', 'GET'), { headers: { range: 'bytes=-3' } })).text(), '789');
  const bad = await fetch(sign('v/clip.mp4', 'GET'), { headers: { range: 'bytes=50-60' } });
  t.is(bad.status, 416);
  t.is(bad.headers.get('content-range'), 'bytes */10');
  const head = await fetch(sign('v/clip.mp4', 'GET'), { method: 'HEAD' });
  t.is(head.headers.get('content-length'), '10');

  const expired = await fetch(sign('v/clip.mp4', 'GET', -5));
  t.is(expired.status, 403);
  t.regex((await expired.json()).message, /expired/);
  const tampered = sign('v/clip.mp4', 'GET').replace('clip.mp4', 'other.mp4');
  t.is((await fetch(tampered)).status, 403);
  t.is((await fetch(sign('v/missing.mp4', 'GET'))).status, 404);

  // Uploads are bound to a task's lease (test/agent-upload-urls.test.ts); a route without that gate takes none.
  t.is((await fetch(sign('v/new.mp4', 'GET'), { method: 'PUT', body: 'x' })).status, 405);
  t.is(await store.stat('v/new.mp4'), null);
  await close();
});

test('the sweeper removes old objects without rows and keeps the rest', async (t) => {
  const { store, close } = await setup();
  await store.put('orgs/a/known.mp4', Buffer.from('k'));
  await store.put('orgs/a/orphan.mp4', Buffer.from('orphan'));
  const later = new Date(Date.now() + 60_000);
  const result = await sweepOrphans(store, 'orgs/', async (key) => key.endsWith('known.mp4'), { olderThan: later });
  t.deepEqual(result, { scanned: 2, deleted: 1, deletedBytes: 6 });
  t.truthy(await store.stat('orgs/a/known.mp4'));
  t.is((await sweepOrphans(store, 'orgs/', async () => false, { olderThan: new Date(0) })).deleted, 0, 'fresh objects are kept');
  await close();
});
