import test from 'ava';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { wordErrorRate } from '@shorts/common/text/transcript';
import { repoRoot } from '@shorts/common/paths';
import { haveMedia, MEDIA, needing } from './helpers/requirements.js';
import { createTranscriber, transcriberConfigFromEnv } from '../node-agent/src/transcribe/transcriber.js';
import { findWhisperModel, mergeTokensToWords } from '../node-agent/src/transcribe/whisper-onnx.js';

test('whisper BPE tokens merge into words; punctuation attaches without stretching the word', (t) => {
  const tokens = [' God', ',', ' as', ' a', ' direct', ' con', 'sequence', ' of', ' the', ' sin', '.'];
  const starts = [0.0, 0.62, 0.86, 0.92, 1.12, 1.32, 1.6, 1.94, 2.26, 2.48, 2.7];
  const words = mergeTokensToWords(tokens, starts, undefined, 3);
  t.deepEqual(
    words.map((w) => w.text),
    ['God,', 'as', 'a', 'direct', 'consequence', 'of', 'the', 'sin.'],
  );
  t.deepEqual(words[0], { text: 'God,', start: 0, end: 0.62 });
  t.deepEqual(words[4], { text: 'consequence', start: 1.32, end: 1.94 });
  t.is(words.at(-1)!.end, 2.7, 'final punctuation does not extend the last word');
  // With durations, ends come from them; special tokens are skipped.
  const d = mergeTokensToWords(['<|en|>', ' Hi', ' there'], [0, 0.5, 1.0], [0, 0.3, 0.4], 2);
  t.deepEqual(d, [
    { text: 'Hi', start: 0.5, end: 0.8 },
    { text: 'there', start: 1.0, end: 1.4 },
  ]);
});

// The model files come from `npm run models:fetch`, which needs the internet; CI has none, so no
// CI machine has them and their absence is a skip everywhere, never a failure. Decided when the
// file loads, so ava reports the test as skipped rather than as passed.
const model = findWhisperModel(path.join(repoRoot(), 'models'));
if (!model) {
  console.log(
    'transcribe-whisper: skipping "Whisper ONNX on jfk.wav": no Whisper model files under models/whisper-* ' +
      '(CI cannot download them: it has no internet; run npm run models:fetch on a machine that has)',
  );
}

needing({ media: haveMedia, optional: { 'Whisper model files under models/whisper-* (npm run models:fetch)': Boolean(model) } })(
  'Whisper ONNX on jfk.wav through the factory (needs models/whisper-*)',
  async (t) => {
    const tr = createTranscriber(transcriberConfigFromEnv({}, { concurrency: 2 }));
    const started = Date.now();
    const out = await tr.transcribe(path.join(MEDIA, 'jfk.wav'));
    const wer = wordErrorRate(await readFile(path.join(MEDIA, 'jfk.ref.txt'), 'utf8'), out.text);
    t.log(`${out.backend}: WER ${wer.toFixed(3)} in ${Date.now() - started} ms: ${out.text}`);
    t.true(wer < 0.3);
    t.true(out.words.length > 15);
    for (const w of out.words) t.true(w.start >= 0 && w.end <= 11.01 && w.end >= w.start);
  },
);
