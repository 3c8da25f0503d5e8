import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { safeDownload, FetchRefusedError } from '@shorts/common/net/safe-fetch';
import { parseAllowlist } from '@shorts/common/net/address-policy';
import { downloadSource } from '../node-agent/src/tasks/download.js';
import { TaskError } from '../node-agent/src/tasks/task-context.js';
import type { AgentConfig } from '../node-agent/src/config.js';
import { FFMPEG, FFPROBE } from './helpers/media.js';
import { serveRanged, type RangeServerOptions } from './helpers/range-server.js';

// The agent's download of a user's URL, against a server that counts what it sends: an MP4 with its
// index at the end is read index first with range requests and each byte crosses once, a broken
// transfer is resumed where the server takes ranges and refused, saying why, where it does not.

const run = promisify(execFile);
const allowlist = parseAllowlist('127.0.0.1');
let dir: string;
/** An MP4 as ffmpeg writes it by default: ftyp, mdat, then moov at the end. */
let indexLast: Buffer;

test.before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ranged-'));
  const file = path.join(dir, 'index-last.mp4');
  await run(FFMPEG, [
    ...['-y', '-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=s=640x360:r=25:d=4', '-f', 'lavfi', '-i', 'sine=d=4'],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', file],
  ]);
  indexLast = await readFile(file);
});

/** The test file alone, at /file, from a server that counts what it sends. */
const server = (opts: RangeServerOptions & { body: () => Buffer }) => serveRanged({ file: opts.body }, opts);

const dest = async () => path.join(await mkdtemp(path.join(dir, 'd-')), 'source');

function moovOffset(file: Buffer): number {
  for (let at = 0; at + 8 <= file.length; at += file.readUInt32BE(at)) {
    if (file.toString('latin1', at + 4, at + 8) === 'moov') return at;
  }
  throw new Error('no moov');
}

test('an MP4 with its index at the end is read index first with range requests, each byte once', async (t) => {
  const s = await server({ body: () => indexLast, ranges: true });
  const out = await dest();
  let servedAtIndex = -1;
  let probed = '';
  const res = await safeDownload(s.url('moved/file'), out, {
    allowlist,
    onIndex: async (partial) => {
      servedAtIndex = s.total();
      // The partial file (head and tail, no media in between) already tells what the file is.
      const { stdout } = await run(FFPROBE, ['-v', 'error', '-show_entries', 'stream=codec_type:format=duration', '-of', 'json', partial]);
      probed = stdout;
    },
  });
  t.true(res.ranged);
  t.true((await readFile(out)).equals(indexLast), 'the file arrives whole and unchanged');
  t.is(s.total(), indexLast.length, `served ${s.total()} bytes for a file of ${indexLast.length}`);
  const ranges = s.served.filter((e) => e.status === 206).map((e) => e.range);
  const moov = moovOffset(indexLast);
  t.true(moov > 262_144, `the test file's index must lie past the first request (${moov})`);
  t.deepEqual(ranges, ['bytes=0-262143', `bytes=${moov}-${indexLast.length - 1}`, `bytes=262144-${moov - 1}`]);
  const info = JSON.parse(probed) as { streams: Array<{ codec_type: string }>; format: { duration: string } };
  t.true(
    info.streams.some((x) => x.codec_type === 'video'),
    probed,
  );
  t.true(Math.abs(Number(info.format.duration) - 4) < 0.1, probed);
  t.true(servedAtIndex < indexLast.length / 2, `the index was read after ${servedAtIndex} of ${indexLast.length} bytes`);
  await s.close();
});

test('a server without range support gets one plain request, and the file arrives whole', async (t) => {
  const s = await server({ body: () => indexLast, ranges: false });
  const out = await dest();
  const res = await safeDownload(s.url('file'), out, { allowlist });
  t.false(res.ranged);
  t.is(s.served.length, 1);
  t.is(s.total(), indexLast.length);
  t.true((await readFile(out)).equals(indexLast));
  await s.close();
});

test('a transfer that breaks off is resumed where it broke when the server takes ranges', async (t) => {
  // The head's and the middle's first answers break off after 20 kB; the resumed ones do not.
  const firsts = new Set(['bytes=0-262143']);
  const cut = (range: string | undefined) => (firsts.has(range ?? '') || range?.startsWith('bytes=262144-') ? 20_000 : undefined);
  const s = await server({ body: () => indexLast, ranges: true, cut });
  const out = await dest();
  const res = await safeDownload(s.url('file'), out, { allowlist });
  t.true((await readFile(out)).equals(indexLast), 'the resumed file is byte for byte the served one');
  t.true(res.ranged);
  t.is(s.served.length, 5, JSON.stringify(s.served));
  // What the broken answers sent and was lost in flight is all that crosses twice.
  t.true(s.total() <= indexLast.length + 2 * 20_000, `${s.total()} of ${indexLast.length}`);
  await s.close();
});

test('a transfer that breaks off from a server without ranges is refused, saying why, and leaves nothing', async (t) => {
  const s = await server({ body: () => indexLast, ranges: false, cut: () => 100_000 });
  const out = await dest();
  const err = await t.throwsAsync(safeDownload(s.url('file'), out, { allowlist }), { instanceOf: FetchRefusedError });
  t.is(err?.code, 'network');
  t.regex(err?.message ?? '', /broke off after \d+ of \d+ bytes.*does not take range requests/);
  t.deepEqual(await readdir(path.dirname(out)), []);
  // Through the agent: the task fails as a download failure worth another attempt, naming the URL's role.
  const ctx = { config: { fetchAllowlist: '127.0.0.1' } as AgentConfig, signal: new AbortController().signal };
  const taskErr = await t.throwsAsync(downloadSource(ctx, s.url('file'), out, 1e9), { instanceOf: TaskError });
  t.regex(taskErr?.message ?? '', /^Could not download the video: the transfer broke off/);
  t.is(taskErr?.code, 'DOWNLOAD_NETWORK');
  t.true(taskErr?.retryable);
  await s.close();
});

test('a file that changes on the server between parts is refused, never stitched from two versions', async (t) => {
  let version = 1;
  const s = await server({
    body: () => indexLast,
    ranges: true,
    etag: () => `"v${version}"`,
  });
  const out = await dest();
  const changing = safeDownload(s.url('file'), out, {
    allowlist,
    onIndex: async () => {
      version = 2;
    },
  });
  const err = await t.throwsAsync(changing, { instanceOf: FetchRefusedError });
  t.regex(err?.message ?? '', /changed on the server/);
  t.deepEqual(await readdir(path.dirname(out)), []);
  await s.close();
});

test('every part is fetched under the address guard: a part redirected to a private address is refused', async (t) => {
  const s = await server({ body: () => indexLast, ranges: true, redirectPart: 'http://10.0.0.1/file' });
  const out = await dest();
  const err = await t.throwsAsync(safeDownload(s.url('file'), out, { allowlist }), { instanceOf: FetchRefusedError });
  t.is(err?.code, 'blocked_host');
  t.deepEqual(await readdir(path.dirname(out)), []);
  await s.close();
});
