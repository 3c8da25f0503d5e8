#!/usr/bin/env node
// Downloads the optional Whisper ONNX model files into models/ and verifies their sha256.
// Plain Node 20, no dependencies; needs internet, so it is run by hand (`npm run models:fetch`),
// never at agent start or in tests.
//
//   node scripts/fetch-models.mjs [--model tiny.en|base.en|small.en] [--force]
//
// Every file is checked against a sha256: the one in MODELS below, else the one recorded in
// models/SHA256SUMS. A file with neither is downloaded, its hash printed and written to
// models/SHA256SUMS (trust on first use); every later fetch, on this checkout or on any other that
// gets the committed SHA256SUMS, is verified against it. MODELS_DIR (default models/) and
// HF_ENDPOINT (a mirror) change where files go and come from.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, appendFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MODELS_DIR = path.resolve(process.env.MODELS_DIR || path.join(ROOT, 'models'));
const LOCK = path.join(MODELS_DIR, 'SHA256SUMS');
const HF = (process.env.HF_ENDPOINT || 'https://huggingface.co').replace(/\/+$/, '');

// sherpa-onnx exports of OpenAI Whisper (MIT licence), published by the sherpa-onnx author.
// sha256: null means "not pinned in this file": models/SHA256SUMS holds it after the first fetch.
const whisper = (name, repo) => ({
  dir: `whisper-${name}`,
  files: [`${name}-encoder.int8.onnx`, `${name}-decoder.int8.onnx`, `${name}-tokens.txt`].map((file) => ({
    file,
    url: `${HF}/${repo}/resolve/main/${file}`,
    sha256: null,
  })),
});

const MODELS = {
  'tiny.en': whisper('tiny.en', 'csukuangfj/sherpa-onnx-whisper-tiny.en'),
  'base.en': whisper('base.en', 'csukuangfj/sherpa-onnx-whisper-base.en'),
  'small.en': whisper('small.en', 'csukuangfj/sherpa-onnx-whisper-small.en'),
};

function parseArgs(argv) {
  const args = { model: 'tiny.en', force: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--pin')
      continue; // the old explicit flag: first-use pinning is the default now
    else if (a === '--force') args.force = true;
    else if (a === '--model') args.model = argv[++i];
    else if (a.startsWith('--model=')) args.model = a.slice(8);
    else if (a === '--help' || a === '-h') args.help = true;
    else throw new Error(`unknown argument ${a}`);
  }
  return args;
}

async function readLock() {
  const pins = new Map();
  if (!existsSync(LOCK)) return pins;
  for (const line of (await readFile(LOCK, 'utf8')).split('\n')) {
    const m = /^([0-9a-f]{64}) [ *](.+)$/.exec(line.trim());
    if (m) pins.set(m[2], m[1]);
  }
  return pins;
}

async function sha256Of(file) {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk);
  return hash.digest('hex');
}

/** Streams to a temporary name while hashing, so a cut download never looks like a model file. */
async function download(url, dest) {
  const tmp = `${dest}.part`;
  const res = await fetch(url, { redirect: 'follow' });
  if (!res.ok || !res.body) throw new Error(`GET ${url}: HTTP ${res.status}`);
  const total = Number(res.headers.get('content-length')) || 0;
  const hash = createHash('sha256');
  let received = 0;
  let lastShown = 0;
  const body = Readable.fromWeb(res.body);
  body.on('data', (chunk) => {
    hash.update(chunk);
    received += chunk.length;
    if (process.stderr.isTTY && Date.now() - lastShown > 500) {
      lastShown = Date.now();
      process.stderr.write(`\r  ${(received / 1e6).toFixed(1)}${total ? ` / ${(total / 1e6).toFixed(1)}` : ''} MB`);
    }
  });
  try {
    await pipeline(body, createWriteStream(tmp));
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  if (process.stderr.isTTY) process.stderr.write('\n');
  return { tmp, sha256: hash.digest('hex'), bytes: received };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.help) {
    console.log('usage: node scripts/fetch-models.mjs [--model ' + Object.keys(MODELS).join('|') + '] [--force]');
    return;
  }
  const model = MODELS[args.model];
  if (!model) throw new Error(`unknown model ${args.model}; choose one of ${Object.keys(MODELS).join(', ')}`);
  const dir = path.join(MODELS_DIR, model.dir);
  const pins = await readLock();
  let failed = false;

  for (const f of model.files) {
    const rel = `${model.dir}/${f.file}`;
    const dest = path.join(dir, f.file);
    const expected = f.sha256 ?? pins.get(rel);
    if (!args.force && existsSync(dest) && expected && (await sha256Of(dest)) === expected) {
      console.log(`${rel}: present, sha256 ok`);
      continue;
    }
    console.log(`${rel}: downloading ${f.url}`);
    await mkdir(dir, { recursive: true });
    const got = await download(f.url, dest);
    if (expected && got.sha256 !== expected) {
      await rm(got.tmp, { force: true });
      console.error(`${rel}: sha256 mismatch: expected ${expected}, got ${got.sha256}. File discarded.`);
      failed = true;
      continue;
    }
    await rename(got.tmp, dest);
    if (!expected) {
      await mkdir(MODELS_DIR, { recursive: true });
      await appendFile(LOCK, `${got.sha256}  ${rel}\n`);
      console.log(
        `${rel}: sha256 ${got.sha256} (${got.bytes} bytes), first download: recorded in ${path.relative(process.cwd(), LOCK) || LOCK}; later fetches are checked against it (commit it to pin it for everyone)`,
      );
    } else {
      console.log(`${rel}: ${(await stat(dest)).size} bytes, sha256 ok`);
    }
  }
  if (failed) process.exitCode = 1;
  else console.log(`Whisper model ready in models/${model.dir}; the agent will use it when TRANSCRIBE_API_URL is not set.`);
}

main().catch((err) => {
  console.error(err.message || err);
  process.exitCode = 1;
});
