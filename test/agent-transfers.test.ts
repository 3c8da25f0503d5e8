// Transfers between an agent and the coordinator's object store that break off (the coordinator was
// killed or restarted, the network dropped) fail the attempt as retryable, never as a crash of the
// task: the fault suite saw "task crashed: terminated" when the coordinator died mid-download.
import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile, readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { downloadObject, uploadObject } from '../node-agent/src/tasks/download.js';
import { TaskError } from '../node-agent/src/tasks/task-context.js';
import { serveRanged } from './helpers/range-server.js';

async function serve(handler: http.RequestListener): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/objects/x`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

let dir: string;
test.before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'agent-transfers-'));
});
test.after.always(() => rm(dir, { recursive: true, force: true }));

test('a download cut off mid-body is a retryable TRANSFER_FAILED, and leaves no partial file', async (t) => {
  const s = await serve((_req, res) => {
    res.writeHead(200, { 'content-length': '1000000' });
    res.write(Buffer.alloc(64 * 1024));
    setTimeout(() => res.socket?.destroy(), 50);
  });
  t.teardown(s.close);
  const dest = path.join(dir, 'cut.bin');
  const err = await t.throwsAsync(downloadObject(s.url, dest), { instanceOf: TaskError });
  t.is(err!.code, 'TRANSFER_FAILED');
  t.true(err!.retryable);
  t.regex(err!.message, /broke off/);
  t.deepEqual(
    (await readdir(dir)).filter((f) => f.startsWith('cut')),
    [],
  );
});

test('a download cut off mid-body from a store that takes ranges is resumed where it broke', async (t) => {
  const body = randomBytes(1_000_000);
  // The whole-file answer breaks off after 64 kB, and so does the first resumed one.
  let cuts = 0;
  const s = await serveRanged({ x: () => body }, { ranges: true, cut: () => (cuts++ < 2 ? 64 * 1024 : undefined) });
  t.teardown(s.close);
  const dest = path.join(dir, 'resumed.bin');
  const { bytes } = await downloadObject(s.url('x'), dest);
  t.is(bytes, body.length);
  t.true((await readFile(dest)).equals(body), 'byte for byte the stored file');
  t.deepEqual(
    s.served.map((e) => e.status),
    [200, 206, 206],
  );
  t.true(s.total() <= body.length + 2 * 64 * 1024, `${s.total()} bytes served for ${body.length}`);
});

test('a coordinator that is gone (connection refused) is a retryable TRANSFER_FAILED', async (t) => {
  const s = await serve((_req, res) => res.end('x'));
  const url = s.url;
  await s.close();
  const err = await t.throwsAsync(downloadObject(url, path.join(dir, 'gone.bin')), { instanceOf: TaskError });
  t.is(err!.code, 'TRANSFER_FAILED');
  t.true(err!.retryable);
});

test('an upload whose connection drops is retryable; one the store refuses (4xx) is not', async (t) => {
  const file = path.join(dir, 'result.mp4');
  await writeFile(file, Buffer.alloc(256 * 1024));
  const dropping = await serve((req) => req.once('data', () => req.socket.destroy()));
  t.teardown(dropping.close);
  const dropped = await t.throwsAsync(uploadObject(dropping.url, file, 'video/mp4'), { instanceOf: TaskError });
  t.is(dropped!.code, 'TRANSFER_FAILED');
  t.true(dropped!.retryable);

  const refusing = await serve((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(403);
      res.end('bad signature');
    });
  });
  t.teardown(refusing.close);
  const refused = await t.throwsAsync(uploadObject(refusing.url, file, 'video/mp4'), { instanceOf: TaskError });
  t.is(refused!.code, 'STORE_FAILED');
  t.false(refused!.retryable);
  t.regex(refused!.message, /HTTP 403.*bad signature/);
});

test('a transfer stopped by the task itself (lease lost, cancelled) is an abort, not a failure to retry', async (t) => {
  const s = await serve((_req, res) => {
    res.writeHead(200, { 'content-length': '1000000' });
    res.write(Buffer.alloc(1024));
  });
  t.teardown(s.close);
  const abort = new AbortController();
  setTimeout(() => abort.abort(), 100);
  // Aborted before the answer's headers, fetch rejects with a DOMException (not an Error to ava);
  // after them, the body's pipeline with an AbortError. Either way an abort, not a TaskError.
  const err = await t.throwsAsync(downloadObject(s.url, path.join(dir, 'aborted.bin'), abort.signal), { any: true });
  t.false(err instanceof TaskError);
  t.is((err as { name?: string }).name, 'AbortError');
});
