import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { readWavPcm, toMonoFloat32, writeWavPcm } from '../node-agent/src/media/wav.js';
import { assertAudible, measureLevels, SilentAudioError, isSilent } from '../node-agent/src/media/audio-levels.js';
import { checkPocketsphinx, parsePocketsphinxLine, PocketsphinxTranscriber } from '../node-agent/src/transcribe/pocketsphinx.js';
import { parseSpotLine, spotTopics } from '../node-agent/src/transcribe/keyword-spotting.js';
import { fliteAvailable, matchWords, synthesiseTalk } from './transcribe-synth.js';
import { havePocketsphinx, needing } from './helpers/requirements.js';

let dir: string;
test.before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ps-test-'));
});
test.after.always(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('word lines are parsed; sentence markers, silence, noise and alternates are handled', (t) => {
  t.deepEqual(parsePocketsphinxLine('country 5.860 6.420 0.473555'), { text: 'country', start: 5.86, end: 6.42, confidence: 0.473555 });
  t.deepEqual(parsePocketsphinxLine('read(2) 9.740 9.840 0.002211'), { text: 'read', start: 9.74, end: 9.84, confidence: 0.002211 });
  // Posteriors slightly above 1 come out of the log-domain arithmetic; they are clamped.
  t.is(parsePocketsphinxLine("don't 1.000 1.200 1.000300")?.confidence, 1);
  for (const filler of [
    '<s> 0.000 0.040 0.998900',
    '</s> 2.310 2.440 1.000000',
    '<sil> 3.740 3.980 0.828680',
    '[NOISE] 6.550 6.630 0.332529',
    '[SPEECH] 1.0 1.1 0.5',
  ]) {
    t.is(parsePocketsphinxLine(filler), undefined, filler);
  }
  // The hypothesis line has four tokens too but no times.
  t.is(parsePocketsphinxLine('what your country can'), undefined);
});

test('a missing binary is reported clearly', async (t) => {
  t.regex((await checkPocketsphinx({ bin: '/nonexistent/pocketsphinx_continuous' }))!, /not installed/);
});

needing({ tools: { pocketsphinx: havePocketsphinx } })(
  'a missing model is reported clearly; the installed one passes the check',
  async (t) => {
    t.regex((await checkPocketsphinx({ modelDir: '/nonexistent/model' }))!, /model file missing/);
    t.is(await checkPocketsphinx(), undefined);
  },
);

needing({ tools: { pocketsphinx: havePocketsphinx, flite: fliteAvailable() } })(
  'synthesised phrases are recognised with word start times within 0.3 s',
  async (t) => {
    const talk = await synthesiseTalk(dir, [
      { text: 'the weather today is very nice', pauseAfter: 0.8 },
      { text: 'we will go to the park after lunch', pauseAfter: 1.0 },
      { text: 'my brother likes to play football with his friends', pauseAfter: 0.7 },
      { text: 'please call me when you get home', pauseAfter: 0.6 },
    ]);
    const progress: number[] = [];
    const started = Date.now();
    const transcript = await new PocketsphinxTranscriber().transcribe(talk.wavPath, { onProgress: (f) => progress.push(f) });
    const ms = Date.now() - started;
    const m = matchWords(talk.words, transcript.words, 0.3);
    t.log(
      `${talk.durationSec.toFixed(1)} s audio in ${ms} ms; recognised ${m.matched}/${talk.words.length} reference words; start error max ${m.maxError.toFixed(3)} s`,
    );
    t.log(transcript.text);
    t.true(m.recall >= 0.85, `recall ${m.recall}`);
    t.is(m.within, m.matched, 'every recognised reference word starts within 0.3 s of its synthesised time');
    t.is(transcript.backend, 'pocketsphinx');
    t.is(transcript.language, 'en');
    t.true(Math.abs(transcript.durationSec - talk.durationSec) < 0.01);
    for (const w of transcript.words) {
      t.true(w.end >= w.start && w.confidence! >= 0 && w.confidence! <= 1);
      t.notRegex(w.text, /[<>[\]()]/);
    }
    t.deepEqual(
      [...progress].sort((a, b) => a - b),
      progress,
      'progress never goes back',
    );
    t.is(progress.at(-1), 1);
  },
);

test('silent audio gives no words and is detected as silent', async (t) => {
  const silent = path.join(dir, 'silent.wav');
  await writeWavPcm(silent, new Int16Array(16_000 * 3), 16_000);
  const hum = new Int16Array(16_000 * 3).map((_, i) => Math.round(20 * Math.sin(i / 10))); // ~ -67 dBFS
  const humPath = path.join(dir, 'hum.wav');
  await writeWavPcm(humPath, hum, 16_000);

  const levels = measureLevels(toMonoFloat32(await readWavPcm(silent)), 16_000);
  t.true(isSilent(levels));
  t.is(levels.rmsDb, -Infinity);
  const err = await t.throwsAsync(assertAudible(silent), { instanceOf: SilentAudioError });
  t.regex(err!.message, /silent/);
  await t.throwsAsync(assertAudible(humPath), { instanceOf: SilentAudioError });
});

needing({ tools: { pocketsphinx: havePocketsphinx } })('pocketsphinx hears no words in silence', async (t) => {
  const silent = path.join(dir, 'silent-for-pocketsphinx.wav');
  await writeWavPcm(silent, new Int16Array(16_000 * 3), 16_000);
  const transcript = await new PocketsphinxTranscriber().transcribe(silent);
  t.deepEqual(transcript.words, []);
  t.is(transcript.text, '');
});

needing({ tools: { flite: fliteAvailable() } })('speech is not flagged as silent', async (t) => {
  const talk = await synthesiseTalk(dir, [{ text: 'hello there', pauseAfter: 0.2 }]);
  const levels = await assertAudible(talk.wavPath);
  t.true(levels.loudestWindowDb > -30);
});

needing({ tools: { pocketsphinx: havePocketsphinx } })(
  'a WAV that is not 16 kHz mono is refused rather than decoded into nonsense',
  async (t) => {
    const wrong = path.join(dir, 'stereo44.wav');
    await writeWavPcm(wrong, new Int16Array(44_100 * 2), 44_100, 2);
    await t.throwsAsync(new PocketsphinxTranscriber().transcribe(wrong), { message: /16 kHz mono/ });
    await t.throwsAsync(spotTopics(wrong, ['bread'], { workDir: dir }), { message: /16 kHz mono/ });
  },
);

test('keyword spotter lines are parsed: phrases with spaces, and only the topics asked', (t) => {
  const asked = new Map([
    ['marathon', 'marathon'],
    ['job interview', 'job interview'],
  ]);
  t.deepEqual(parseSpotLine('marathon  9.710 10.280 0.929221', asked), { topic: 'marathon', start: 9.71, end: 10.28 });
  t.deepEqual(parseSpotLine('job interview 3.100 3.900 0.8', asked), { topic: 'job interview', start: 3.1, end: 3.9 });
  t.is(parseSpotLine('garden  marathon  bread', asked), undefined, 'the hypothesis line has no times');
  t.is(parseSpotLine('bread 2.930 3.200 0.900944', asked), undefined);
});

needing({ tools: { pocketsphinx: havePocketsphinx, flite: fliteAvailable() } })(
  'asked topics are spotted in the audio where they are said, and nowhere else',
  async (t) => {
    const talk = await synthesiseTalk(dir, [
      { text: 'nobody expected me to finish my first marathon', pauseAfter: 0.8 },
      { text: 'here is the secret my grandfather taught me about bread', pauseAfter: 0.9 },
      { text: 'can you see my screen now', pauseAfter: 0.7 },
      { text: 'at mile twenty of the marathon my legs stopped working', pauseAfter: 0.6 },
    ]);
    const topics = ['Marathon', 'bread', 'coffee', 'xylophonequartz'];
    const spots = await spotTopics(talk.wavPath, topics, { workDir: dir });
    t.log(spots.map((s) => `${s.topic} ${s.start}-${s.end}`).join(', '));
    const said = (topic: string) => talk.words.filter((w) => w.text === topic);
    for (const topic of ['marathon', 'bread']) {
      const found = spots.filter((s) => s.topic === topic);
      t.is(found.length, said(topic).length, `${topic}: one spot per mention`);
      for (const w of said(topic))
        t.true(
          found.some((s) => Math.abs(s.start - w.start) <= 0.3),
          `${topic} at ${w.start}`,
        );
    }
    t.false(
      spots.some((s) => s.topic === 'coffee'),
      'a topic never said is not spotted',
    );
    t.false(
      spots.some((s) => s.topic === 'xylophonequartz'),
      'a word outside the dictionary is skipped, not an error',
    );

    // A client's range: only what is said inside it, at its time in the whole recording.
    const last = said('marathon').at(-1)!;
    const range = { start: last.start - 2.5, end: talk.durationSec };
    const inRange = await spotTopics(talk.wavPath, topics, { workDir: dir, range });
    t.deepEqual(
      inRange.map((s) => s.topic),
      ['marathon'],
      'the first marathon and the bread lie before the range',
    );
    t.true(Math.abs(inRange[0]!.start - last.start) <= 0.3, `spotted at ${inRange[0]!.start}, said at ${last.start}`);
  },
);
