import test from 'ava';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { writeWavPcm } from '../node-agent/src/media/wav.js';
import { mapWords, OpenAiCompatibleTranscriber, transcriptionsEndpoint } from '../node-agent/src/transcribe/openai-compatible.js';
import {
  checkTranscriberAvailable,
  chooseBackend,
  createTranscriber,
  transcriberConfigFromEnv,
} from '../node-agent/src/transcribe/transcriber.js';
import { fliteAvailable, synthesiseTalk } from './transcribe-synth.js';
import { needing } from './helpers/requirements.js';
import { listener } from './helpers/http.js';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  form: FormData;
}

/** A fake transcription server on 127.0.0.1 answering from a queue of responses. */
async function fakeServer(responses: Array<{ status: number; body: unknown }>) {
  const seen: Seen[] = [];
  const server = http.createServer(
    listener(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks);
      // Let undici parse the multipart body the way a real server framework would.
      const form = await new Request('http://x' + req.url, {
        method: 'POST',
        headers: req.headers as Record<string, string>,
        body,
      }).formData();
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, form });
      const next = responses.length > 1 ? responses.shift()! : responses[0]!;
      res.writeHead(next.status, { 'content-type': 'application/json' });
      res.end(typeof next.body === 'string' ? next.body : JSON.stringify(next.body));
    }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, close: () => new Promise<void>((r) => server.close(() => r())) };
}

let dir: string;
let wav: string;
test.before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'openai-test-'));
  wav = path.join(dir, 'a.wav');
  await writeWavPcm(
    wav,
    new Int16Array(16_000 * 2).map((_, i) => Math.round(3000 * Math.sin(i / 5))),
    16_000,
  );
});
test.after.always(async () => {
  await rm(dir, { recursive: true, force: true });
});

const VERBOSE = {
  task: 'transcribe',
  language: 'english',
  duration: 2.0,
  text: 'Ask not what your country can do.',
  words: [
    { word: 'Ask', start: 0.1, end: 0.3 },
    { word: ' not', start: 0.3, end: 0.5 },
    { word: 'what', start: 0.6, end: 0.8 },
  ],
  segments: [{ id: 0, start: 0, end: 2, text: 'Ask not what your country can do.' }],
};

test('posts multipart with model, verbose_json, word granularity and the bearer key; maps words', async (t) => {
  const srv = await fakeServer([{ status: 200, body: VERBOSE }]);
  try {
    const tr = new OpenAiCompatibleTranscriber({ url: srv.url + '/', apiKey: 'sk-test-123', model: 'whisper-large-v3', language: 'en' });
    const progress: number[] = [];
    const out = await tr.transcribe(wav, { onProgress: (f) => progress.push(f) });
    t.is(srv.seen.length, 1);
    const req = srv.seen[0]!;
    t.is(req.method, 'POST');
    t.is(req.url, '/v1/audio/transcriptions');
    t.is(req.headers.authorization, 'Bearer sk-test-123');
    t.regex(req.headers['content-type']!, /^multipart\/form-data; boundary=/);
    t.is(req.form.get('model'), 'whisper-large-v3');
    t.is(req.form.get('response_format'), 'verbose_json');
    t.true(req.form.getAll('timestamp_granularities[]').includes('word'));
    t.is(req.form.get('language'), 'en');
    const file = req.form.get('file') as File;
    t.is(file.name, 'a.wav');
    t.is(file.type, 'audio/wav');
    t.is(file.size, 44 + 16_000 * 2 * 2);
    t.is(Buffer.from(await file.arrayBuffer()).toString('ascii', 0, 4), 'RIFF');

    t.deepEqual(out.words, [
      { text: 'Ask', start: 0.1, end: 0.3 },
      { text: 'not', start: 0.3, end: 0.5 },
      { text: 'what', start: 0.6, end: 0.8 },
    ]);
    t.is(out.language, 'en');
    t.is(out.text, 'Ask not what your country can do.');
    t.is(out.backend, 'openai-compatible');
    t.deepEqual(progress, [0, 1]);
  } finally {
    await srv.close();
  }
});

test('no key means no Authorization header; a /v1 suffix on the URL is tolerated', async (t) => {
  const srv = await fakeServer([{ status: 200, body: VERBOSE }]);
  try {
    await new OpenAiCompatibleTranscriber({ url: srv.url + '/v1' }).transcribe(wav);
    t.is(srv.seen[0]!.url, '/v1/audio/transcriptions');
    t.is(srv.seen[0]!.headers.authorization, undefined);
    t.is(srv.seen[0]!.form.get('model'), 'whisper-1');
    t.is(srv.seen[0]!.form.get('language'), null);
  } finally {
    await srv.close();
  }
  t.is(transcriptionsEndpoint('https://api.example.com/v1/'), 'https://api.example.com/v1/audio/transcriptions');
});

test('a 5xx is retried, a 401 is not and its message reaches the caller', async (t) => {
  const flaky = await fakeServer([
    { status: 503, body: { error: 'busy' } },
    { status: 200, body: VERBOSE },
  ]);
  try {
    const out = await new OpenAiCompatibleTranscriber({ url: flaky.url }).transcribe(wav);
    t.is(flaky.seen.length, 2);
    t.is(out.words.length, 3);
  } finally {
    await flaky.close();
  }
  const denied = await fakeServer([{ status: 401, body: { error: { message: 'Incorrect API key provided' } } }]);
  try {
    await t.throwsAsync(new OpenAiCompatibleTranscriber({ url: denied.url, apiKey: 'bad' }).transcribe(wav), {
      message: /HTTP 401.*Incorrect API key/,
    });
    t.is(denied.seen.length, 1);
  } finally {
    await denied.close();
  }
});

test('a server that ignores word granularity still yields timed words from segments', (t) => {
  const words = mapWords(
    {
      text: 'aa bb cccc',
      segments: [
        { start: 1, end: 2, text: 'aa bb' },
        { start: 3, end: 4, text: ' cccc' },
      ],
    },
    5,
  );
  t.deepEqual(
    words.map((w) => w.text),
    ['aa', 'bb', 'cccc'],
  );
  t.is(words[0]!.start, 1);
  t.is(words[1]!.end, 2);
  t.is(words[2]!.start, 3);
  t.deepEqual(
    mapWords({ text: 'x y' }, 4).map((w) => [w.start, w.end]),
    [
      [0, 2],
      [2, 4],
    ],
  );
  t.deepEqual(mapWords({ words: [{ word: ' hi', start: 1, end: 1.2, probability: 0.9 }] }, 4), [
    { text: 'hi', start: 1, end: 1.2, confidence: 0.9 },
  ]);
});

test('backend choice: endpoint when configured, else a Whisper model under models/, else pocketsphinx', async (t) => {
  const models = path.join(dir, 'models');
  await mkdir(models, { recursive: true });
  const base = transcriberConfigFromEnv({}, { modelsDir: models });
  t.is(chooseBackend(base).kind, 'pocketsphinx');
  t.is(
    chooseBackend(transcriberConfigFromEnv({ TRANSCRIBE_API_URL: 'http://127.0.0.1:9' }, { modelsDir: models })).kind,
    'openai-compatible',
  );

  const wdir = path.join(models, 'whisper-tiny.en');
  await mkdir(wdir);
  for (const f of ['tiny.en-encoder.onnx', 'tiny.en-encoder.int8.onnx', 'tiny.en-decoder.int8.onnx', 'tiny.en-tokens.txt'])
    await writeFile(path.join(wdir, f), '');
  const choice = chooseBackend(base);
  t.is(choice.kind, 'whisper-onnx');
  if (choice.kind === 'whisper-onnx') t.is(path.basename(choice.model.encoder), 'tiny.en-encoder.int8.onnx');
  const emptyModel = await checkTranscriberAvailable(base);
  t.is(emptyModel.backend, 'whisper-onnx');
  t.regex(emptyModel.error!, /empty or unreadable/);
  for (const f of ['tiny.en-encoder.int8.onnx', 'tiny.en-decoder.int8.onnx', 'tiny.en-tokens.txt'])
    await writeFile(path.join(wdir, f), 'not a model');
  t.is((await checkTranscriberAvailable(base)).error, undefined, 'the shallow check only looks at the files');
  const deep = await checkTranscriberAvailable(base, { deep: true });
  t.log(deep.error);
  t.regex(deep.error!, /does not load/);

  const bad = await checkTranscriberAvailable(
    transcriberConfigFromEnv({ TRANSCRIBE_API_URL: 'not a url' }, { modelsDir: path.join(dir, 'none') }),
  );
  t.is(bad.backend, 'openai-compatible');
  t.regex(bad.error!, /not a valid URL/);
  const noSphinx = await checkTranscriberAvailable(
    transcriberConfigFromEnv({ POCKETSPHINX_BIN: '/nope/pocketsphinx_continuous' }, { modelsDir: path.join(dir, 'none') }),
  );
  t.is(noSphinx.backend, 'pocketsphinx');
  t.regex(noSphinx.error!, /pocketsphinx is not installed/);
});

needing({ tools: { flite: fliteAvailable() } })('the factory wraps the endpoint in VAD chunking and shifts its word times', async (t) => {
  const talk = await synthesiseTalk(dir, [
    { text: 'this is the first sentence', pauseAfter: 1.5 },
    { text: 'and this is the second one', pauseAfter: 0.5 },
  ]);
  const srv = await fakeServer([
    { status: 200, body: { text: 'hello', language: 'english', words: [{ word: 'hello', start: 0.25, end: 0.5 }] } },
  ]);
  try {
    const tr = createTranscriber(
      transcriberConfigFromEnv(
        { TRANSCRIBE_API_URL: srv.url, TRANSCRIBE_API_KEY: 'k' },
        { modelsDir: path.join(dir, 'none'), workDir: dir },
      ),
    );
    const out = await tr.transcribe(talk.wavPath);
    t.is(srv.seen.length, 1, 'a short file is one request');
    t.is(out.words[0]!.start, 0.25, 'no leading silence trimmed from a short file: offset 0');
    t.is(out.backend, 'openai-compatible');
  } finally {
    await srv.close();
  }
});
