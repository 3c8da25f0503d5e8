import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { wordErrorRate, type Transcript } from '@shorts/common/text/transcript';
import { readWavInfo } from '../node-agent/src/media/wav.js';
import { ChunkedTranscriber, planChunks, speechFrames } from '../node-agent/src/transcribe/chunked.js';
import { PocketsphinxTranscriber } from '../node-agent/src/transcribe/pocketsphinx.js';
import type { Transcriber } from '../node-agent/src/transcribe/types.js';
import { fliteAvailable, matchWords, synthesiseTalk, type Synthesised } from './transcribe-synth.js';
import { havePocketsphinx, needing } from './helpers/requirements.js';

const SENTENCES: Array<[string, number]> = [
  ['welcome to the show today we are talking about gardens', 0.9],
  ['most people think that growing food at home is hard', 0.6],
  ['but it is easier than you might expect', 1.3],
  ['first you need a sunny place and some good soil', 0.7],
  ['second you should water the plants every morning', 1.1],
  ['third you have to be patient because nothing grows overnight', 0.8],
  ['many of our listeners started with tomatoes and beans', 1.5],
  ['they told us that the first harvest was the best part of the year', 0.6],
  ['so why not try it this spring', 1.0],
  ['you can start with a small box on the window', 0.7],
  ['after a few weeks you will see the first green leaves', 1.2],
  ['and that is the moment when most people fall in love with gardening', 0.9],
  ['some of you asked about the cost of seeds and tools', 0.7],
  ['the good news is that you can begin with very little money', 1.1],
  ['a bag of soil and a few seeds are enough for the first year', 0.8],
  ['in the next part of the show we will answer your questions', 0.8],
  ['thank you for listening and see you next week', 1.0],
];

let dir: string;
let talk: Synthesised | undefined;
const withTalk = needing({ tools: { flite: fliteAvailable() } });
test.before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'chunk-test-'));
  if (fliteAvailable())
    talk = await synthesiseTalk(
      dir,
      SENTENCES.map(([text, pauseAfter]) => ({ text, pauseAfter })),
    );
});
test.after.always(async () => {
  await rm(dir, { recursive: true, force: true });
});

const vadOf = (probs: number[], frameSamples = 1600) => ({ frameSamples, sampleRate: 16_000, probs: Float32Array.from(probs) });

test('hysteresis keeps a dip inside speech as speech', (t) => {
  t.deepEqual([...speechFrames(Float32Array.from([0.1, 0.6, 0.4, 0.6, 0.2, 0.4]))], [0, 1, 1, 1, 0, 0]);
});

test('cuts go in the middle of the longest pause near the limit, never over the limit', (t) => {
  // 0.1 s frames: speech 0-9.9 s with a short pause at 4 s and a long one at 8 s, then speech to 20 s.
  const probs = Array.from({ length: 200 }, (_, i) => ((i >= 40 && i < 43) || (i >= 80 && i < 90) ? 0.05 : 0.9));
  const chunks = planChunks(vadOf(probs), 200 * 1600, { maxChunkSec: 12, minChunkSec: 2, padSec: 0 });
  t.is(chunks.length, 2);
  t.is(chunks[0]!.endSample, 80 * 1600, 'speech before the pause ends the first chunk (trailing silence trimmed)');
  t.is(chunks[1]!.startSample, 90 * 1600);
  for (const c of chunks) t.true(c.durationSec <= 12);
  t.is(chunks[1]!.offsetSec, chunks[1]!.startSample / 16_000);
});

test('speech with no pause at all is still cut within the limit', (t) => {
  const probs = Array.from({ length: 300 }, (_, i) => (i === 250 ? 0.55 : 0.95));
  const chunks = planChunks(vadOf(probs), 300 * 1600, { maxChunkSec: 10, padSec: 0 });
  t.true(chunks.length >= 3);
  for (const c of chunks) t.true(c.durationSec <= 10 + 1e-9, `chunk of ${c.durationSec} s`);
  t.is(chunks.at(-1)!.endSample, 300 * 1600);
  for (let i = 1; i < chunks.length; i++) t.is(chunks[i]!.startSample, chunks[i - 1]!.endSample, 'nothing lost between hard cuts');
});

test('silent stretches produce no chunk', (t) => {
  const probs = Array.from({ length: 600 }, (_, i) => (i >= 100 && i < 120 ? 0.9 : 0.01));
  const chunks = planChunks(vadOf(probs), 600 * 1600, { maxChunkSec: 30, padSec: 0.5 });
  t.is(chunks.length, 1);
  t.is(chunks[0]!.startSample, 95 * 1600);
  t.is(chunks[0]!.endSample, 125 * 1600);
  t.deepEqual(planChunks(vadOf(new Array(100).fill(0)), 100 * 1600), []);
});

/** Returns one word 0.5 s into every chunk, slowly, and records how many run at once. */
function fakeTranscriber(delayMs: number, failOn?: number) {
  let inFlight = 0;
  const stats = { maxInFlight: 0, calls: 0, aborted: 0 };
  const tr: Transcriber = {
    name: 'fake',
    async transcribe(wav, opts = {}) {
      const call = stats.calls++;
      inFlight++;
      stats.maxInFlight = Math.max(stats.maxInFlight, inFlight);
      try {
        for (let i = 1; i <= 4; i++) {
          await new Promise((r) => setTimeout(r, delayMs / 4));
          if (opts.signal?.aborted) {
            stats.aborted++;
            throw opts.signal.reason;
          }
          opts.onProgress?.(i / 4);
        }
        if (call === failOn) throw new Error('backend exploded');
        const { durationSec } = await readWavInfo(wav);
        return {
          language: 'en',
          text: `w${call}`,
          words: [{ text: `w${call}`, start: 0.5, end: 0.7 }],
          durationSec,
          backend: 'fake',
        } satisfies Transcript;
      } finally {
        inFlight--;
      }
    },
  };
  return { tr, stats };
}

withTalk('chunks run in parallel up to the concurrency and words are shifted by each chunk offset exactly', async (t) => {
  if (!talk) return t.fail('flite is installed, yet the talk was not synthesised');
  const { tr, stats } = fakeTranscriber(200);
  const chunked = new ChunkedTranscriber(tr, { maxChunkSec: 8, concurrency: 3, workDir: dir });
  const { chunks } = await chunked.plan(talk.wavPath);
  const progress: number[] = [];
  const result = await chunked.transcribe(talk.wavPath, { onProgress: (f) => progress.push(f) });
  t.true(chunks.length >= 8);
  t.is(stats.maxInFlight, 3);
  t.deepEqual(
    result.words.map((w) => w.start),
    chunks.map((c) => Math.round((c.offsetSec + 0.5) * 1000) / 1000),
  );
  t.deepEqual(
    [...progress].sort((a, b) => a - b),
    progress,
  );
  t.is(progress.at(-1), 1);
  t.true(progress.length > chunks.length, 'progress moves within chunks, not only between them');
});

withTalk('one failing chunk fails the whole transcription and stops the rest', async (t) => {
  if (!talk) return t.fail('flite is installed, yet the talk was not synthesised');
  const { tr, stats } = fakeTranscriber(200, 1);
  const chunked = new ChunkedTranscriber(tr, { maxChunkSec: 8, concurrency: 2, workDir: dir });
  await t.throwsAsync(chunked.transcribe(talk.wavPath), { message: 'backend exploded' });
  t.true(stats.calls < 8, `only ${stats.calls} chunks were started`);
});

withTalk('cancelling stops the transcription', async (t) => {
  if (!talk) return t.fail('flite is installed, yet the talk was not synthesised');
  const { tr } = fakeTranscriber(400);
  const ctrl = new AbortController();
  setTimeout(() => ctrl.abort(new Error('job cancelled')), 1500);
  await t.throwsAsync(
    new ChunkedTranscriber(tr, { maxChunkSec: 8, concurrency: 2, workDir: dir }).transcribe(talk.wavPath, { signal: ctrl.signal }),
    { message: 'job cancelled' },
  );
});

needing({ tools: { flite: fliteAvailable(), pocketsphinx: havePocketsphinx } })(
  'a ~70 s talk chunked on pauses and transcribed in parallel keeps the words and their times',
  async (t) => {
    if (!talk) return t.fail('flite is installed, yet the talk was not synthesised');
    const chunked = new ChunkedTranscriber(new PocketsphinxTranscriber(), { maxChunkSec: 30, concurrency: os.cpus().length, workDir: dir });
    const { chunks } = await chunked.plan(talk.wavPath);
    t.log(
      `talk ${talk.durationSec.toFixed(1)} s, ${talk.words.length} words; chunks ${chunks.map((c) => `${c.offsetSec.toFixed(2)}+${c.durationSec.toFixed(2)}`).join(', ')}`,
    );
    t.true(talk.durationSec > 65 && talk.durationSec < 80);
    t.true(chunks.length >= 3);
    for (const c of chunks) t.true(c.durationSec <= 30);

    // Every cut lies inside a pause of the reference, and every word lies inside one chunk.
    for (let i = 0; i + 1 < chunks.length; i++) {
      const gapFrom = chunks[i]!.offsetSec + chunks[i]!.durationSec;
      const gapTo = chunks[i + 1]!.offsetSec;
      t.true(
        talk.pauses.some((p) => p.start - 0.05 <= gapFrom && gapTo <= p.end + 0.05),
        `cut ${gapFrom.toFixed(2)}..${gapTo.toFixed(2)} inside a pause`,
      );
    }
    for (const w of talk.words) {
      t.true(
        chunks.some((c) => c.offsetSec <= w.start && w.end <= c.offsetSec + c.durationSec),
        `"${w.text}" at ${w.start.toFixed(2)} split by a cut`,
      );
    }

    const started = Date.now();
    const result = await chunked.transcribe(talk.wavPath);
    const chunkedMs = Date.now() - started;
    const m = matchWords(talk.words, result.words, 0.3);
    const wer = wordErrorRate(talk.words.map((w) => w.text).join(' '), result.text);
    t.log(
      `chunked (${os.cpus().length} in parallel): ${chunkedMs} ms; recognised ${m.matched}/${talk.words.length}; start error max ${m.maxError.toFixed(3)} s; WER vs script ${wer.toFixed(3)}`,
    );
    // Measured 0.096 on this talk (pocketsphinx 5, en-us); the margin absorbs chunk-boundary jitter, not a worse recogniser.
    t.true(wer <= 0.13, `WER ${wer.toFixed(3)} on the synthesised talk`);
    t.true(m.recall >= 0.85, `recall ${m.recall}`);
    t.is(m.within, m.matched, 'every recognised word starts within 0.3 s of its synthesised time');
    t.true(Math.abs(result.durationSec - talk.durationSec) < 0.01);
    for (let i = 1; i < result.words.length; i++)
      t.true(result.words[i]!.start >= result.words[i - 1]!.start, 'words stay in time order across chunks');

    // The same backend over the whole file: chunking must not change what is heard.
    const wholeStart = Date.now();
    const whole = await new PocketsphinxTranscriber().transcribe(talk.wavPath);
    const wholeMs = Date.now() - wholeStart;
    const drift = wordErrorRate(whole.text, result.text);
    t.log(`whole file: ${wholeMs} ms; recognised ${matchWords(talk.words, whole.words).matched}; chunked vs whole WER ${drift.toFixed(3)}`);
    t.true(drift < 0.1);
  },
);
