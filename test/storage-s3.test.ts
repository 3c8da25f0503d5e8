import test from 'ava';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import S3rver from 's3rver';
import { S3ObjectStore } from '../coordinator/src/storage/s3-store.js';

// The S3 backend against s3rver, a real S3-compatible HTTP server (path-style), started here.

let server: S3rver;
let dir: string;
let store: S3ObjectStore;
let endpoint: string;
const text = async (s: Readable) => {
  const c: Buffer[] = [];
  for await (const x of s) c.push(x as Buffer);
  return Buffer.concat(c).toString();
};

test.before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 's3rver-'));
  server = new S3rver({ port: 0, address: '127.0.0.1', directory: dir, silent: true, configureBuckets: [{ name: 'shorts' }] });
  const { port } = await server.run();
  endpoint = `http://127.0.0.1:${port}`;
  store = new S3ObjectStore({
    endpoint,
    region: 'us-east-1',
    bucket: 'shorts',
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    forcePathStyle: true,
  });
});
test.after.always(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

test.serial('put from a buffer, a stream and a file path; get whole and by range', async (t) => {
  t.deepEqual(await store.put('orgs/a/one.txt', Buffer.from('hello world'), { contentType: 'text/plain' }), { size: 11 });
  await store.put('orgs/a/two.txt', Readable.from([Buffer.from('abc'), Buffer.from('def')]));
  const file = path.join(dir, 'local.txt');
  await writeFile(file, 'from a file');
  t.deepEqual(await store.put('orgs/c/file.txt', { path: file }), { size: 11 });
  const got = await store.get('orgs/a/one.txt');
  t.is(got.size, 11);
  t.is(await text(got.stream), 'hello world');
  const part = await store.get('orgs/a/one.txt', { start: 6, end: 10 });
  t.is(part.size, 11);
  t.is(await text(part.stream), 'world');
  t.is(await text((await store.get('orgs/a/two.txt')).stream), 'abcdef');
});

test.serial('stat, list by prefix and delete', async (t) => {
  await store.put('orgs/b/x.bin', Buffer.alloc(5));
  t.is((await store.stat('orgs/a/one.txt'))?.size, 11);
  t.is(await store.stat('orgs/a/nope'), null);
  const keys: string[] = [];
  for await (const o of store.list('orgs/a/')) keys.push(o.key);
  t.deepEqual(keys.sort(), ['orgs/a/one.txt', 'orgs/a/two.txt']);
  await store.delete('orgs/a/one.txt');
  t.is(await store.stat('orgs/a/one.txt'), null);
});

test.serial(
  'move puts an object under another key and removes the old one, by a copy in the service or, past its copy limit, streamed',
  async (t) => {
    await store.put('orgs/m/staging.part', Buffer.from('small object'));
    await store.put('orgs/m/final.mp4', Buffer.from('old'));
    await store.move('orgs/m/staging.part', 'orgs/m/final.mp4');
    t.is(await text((await store.get('orgs/m/final.mp4')).stream), 'small object');
    t.is(await store.stat('orgs/m/staging.part'), null);

    const parted = new S3ObjectStore({
      endpoint,
      region: 'us-east-1',
      bucket: 'shorts',
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      maxCopyBytes: 5 * 1024 * 1024,
    });
    const big = Buffer.alloc(12 * 1024 * 1024);
    for (let i = 0; i < big.length; i += 4096) big.writeUInt32BE(i, i);
    await parted.put('orgs/m/big.part', big);
    await parted.move('orgs/m/big.part', 'orgs/m/big.mp4');
    const chunks: Buffer[] = [];
    for await (const c of (await parted.get('orgs/m/big.mp4')).stream) chunks.push(c as Buffer);
    t.true(Buffer.concat(chunks).equals(big), 'every byte in order');
    t.is(await parted.stat('orgs/m/big.part'), null);
  },
);

test.serial('keys are checked before they reach the service', async (t) => {
  await t.throwsAsync(store.put('../escape', Buffer.from('x')));
});
