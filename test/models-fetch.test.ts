import test from 'ava';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '@shorts/common/paths';

const run = promisify(execFile);

// `npm run models:fetch` against a fake model host started here (no internet): the first download
// records each file's sha256, later ones are verified against it, a changed file is refused.
const REPO = '/csukuangfj/sherpa-onnx-whisper-tiny.en/resolve/main/';
const files: Record<string, Buffer> = {
  'tiny.en-encoder.int8.onnx': Buffer.alloc(300_000, 1),
  'tiny.en-decoder.int8.onnx': Buffer.alloc(200_000, 2),
  'tiny.en-tokens.txt': Buffer.from('hello 0\nworld 1\n'),
};
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let server: http.Server;
let endpoint: string;
let modelsDir: string;

test.before(async () => {
  server = http.createServer((req, res) => {
    const name = (req.url ?? '').startsWith(REPO) ? (req.url ?? '').slice(REPO.length) : '';
    const body = files[name];
    if (!body) return res.writeHead(404).end('not found');
    res.writeHead(200, { 'content-length': body.length }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  modelsDir = await mkdtemp(path.join(os.tmpdir(), 'shorts-models-'));
});
test.after.always(async () => {
  server?.close();
  if (modelsDir) await rm(modelsDir, { recursive: true, force: true });
});

const fetchModels = (...args: string[]) =>
  run(process.execPath, [path.join(repoRoot(), 'scripts/fetch-models.mjs'), ...args], {
    env: { ...process.env, HF_ENDPOINT: endpoint, MODELS_DIR: modelsDir },
  }).then(
    (r) => ({ code: 0, out: r.stdout + r.stderr }),
    (err) => ({ code: err.code as number, out: String(err.stdout) + String(err.stderr) }),
  );

test.serial('the documented command exists', async (t) => {
  const pkg = JSON.parse(await readFile(path.join(repoRoot(), 'package.json'), 'utf8'));
  t.is(pkg.scripts['models:fetch'], 'node scripts/fetch-models.mjs');
  for (const doc of ['README.md', 'models/README.md'])
    t.true((await readFile(path.join(repoRoot(), doc), 'utf8')).includes('npm run models:fetch'), doc);
});

test.serial('first download records each sha256, printed and in SHA256SUMS', async (t) => {
  const first = await fetchModels();
  t.is(first.code, 0, first.out);
  const sums = await readFile(path.join(modelsDir, 'SHA256SUMS'), 'utf8');
  for (const [name, body] of Object.entries(files)) {
    t.true(first.out.includes(sha(body)), `printed ${name}`);
    t.true(sums.includes(`${sha(body)}  whisper-tiny.en/${name}`), `recorded ${name}`);
    t.deepEqual(await readFile(path.join(modelsDir, 'whisper-tiny.en', name)), body);
  }
});

test.serial('later fetches are verified against the recorded hashes', async (t) => {
  const again = await fetchModels('--force');
  t.is(again.code, 0, again.out);
  t.regex(again.out, /sha256 ok/);
  t.is((await readFile(path.join(modelsDir, 'SHA256SUMS'), 'utf8')).trim().split('\n').length, 3, 'nothing recorded twice');

  // The host now serves a different encoder: refused, the good file kept, no partial file left.
  const good = files['tiny.en-encoder.int8.onnx']!;
  files['tiny.en-encoder.int8.onnx'] = Buffer.alloc(300_000, 9);
  const tampered = await fetchModels('--force');
  t.not(tampered.code, 0);
  t.regex(tampered.out, /sha256 mismatch/);
  t.deepEqual(await readFile(path.join(modelsDir, 'whisper-tiny.en', 'tiny.en-encoder.int8.onnx')), good);
  t.false((await readdir(path.join(modelsDir, 'whisper-tiny.en'))).some((f) => f.endsWith('.part')));
  t.false(existsSync(path.join(modelsDir, 'whisper-tiny.en', 'tiny.en-encoder.int8.onnx.part')));
});
