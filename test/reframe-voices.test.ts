import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { FaceTrack } from '@shorts/common/reframe/types';
import { attributeSpeakers } from '../node-agent/src/reframe/speakers.js';
import { voiceChunks, voiceDistance, type VoiceChunk } from '../node-agent/src/reframe/voices.js';
import { readPcm16, SPEECH_RATE, QUIET } from './helpers/speech.js';
import { needing } from './helpers/requirements.js';
import { syntheticTrack } from './helpers/reframe-fixtures.js';
import { fliteAvailable } from './transcribe-synth.js';

const run = promisify(execFile);
const withFlite = needing({ tools: { flite: fliteAvailable() } });

const SENTENCES = [
  'Place the blue box by the window now.',
  'Set white at four again, please.',
  'Lay green with the red one soon.',
  'Bin the old papers before noon.',
  'Put the kettle on for everyone.',
  'The river ran fast after the rain.',
  'We parked the car near the station.',
  'Nobody answered the phone this morning.',
  'She painted the fence a bright yellow.',
];

/** Sentences said by three flite voices in turn (a woman and two men), joined with pauses: the
 *  sound of a talk where speakers take turns, and which voice says what. */
async function threeVoices(dir: string): Promise<{ samples: Int16Array; said: Array<{ start: number; end: number; voice: string }> }> {
  const voices = ['slt', 'rms', 'awb'];
  const parts: Int16Array[] = [];
  const said: Array<{ start: number; end: number; voice: string }> = [];
  let at = 0;
  const pause = new Int16Array(Math.round(0.6 * SPEECH_RATE));
  for (const [i, sentence] of SENTENCES.entries()) {
    const voice = voices[i % voices.length]!;
    const file = path.join(dir, `s${i}.wav`);
    await run('flite', ['-voice', voice, '-t', sentence, '-o', file]);
    const pcm = await readPcm16(file);
    let a = 0;
    let b = pcm.length;
    while (a < b && Math.abs(pcm[a]!) < QUIET) a++;
    while (b > a && Math.abs(pcm[b - 1]!) < QUIET) b--;
    parts.push(pause, pcm.slice(a, b));
    at += pause.length;
    said.push({ start: at / SPEECH_RATE, end: (at + b - a) / SPEECH_RATE, voice });
    at += b - a;
  }
  parts.push(pause);
  const samples = new Int16Array(at + pause.length);
  let offset = 0;
  for (const p of parts) {
    samples.set(p, offset);
    offset += p.length;
  }
  return { samples, said };
}

withFlite(
  'voice prints: pieces of speech in one voice are closer to each other than to other voices, across different words',
  async (t) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'voices-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const { samples, said } = await threeVoices(dir);
    const chunks = voiceChunks({ samples, sampleRate: SPEECH_RATE, startSec: 0 }, said);
    const voiceOf = (c: VoiceChunk) => said.find((s) => c.start >= s.start - 1e-6 && c.end <= s.end + 1e-6)!.voice;
    t.true(chunks.length >= SENTENCES.length, `${chunks.length} pieces`);
    t.true(chunks.every((c) => c.print.length > 0));
    let nearestSame = 0;
    for (const c of chunks) {
      // The nearest piece from another sentence (pieces of one sentence share its words).
      const sentence = said.findIndex((s) => c.start >= s.start - 1e-6 && c.end <= s.end + 1e-6);
      const others = chunks.filter((o) => said.findIndex((s) => o.start >= s.start - 1e-6 && o.end <= s.end + 1e-6) !== sentence);
      const nearest = others.reduce((best, o) => (voiceDistance(c, o) < voiceDistance(c, best) ? o : best));
      if (voiceOf(nearest) === voiceOf(c)) nearestSame++;
    }
    t.log(`${nearestSame} of ${chunks.length}`);
    t.true(nearestSame / chunks.length >= 0.9, `${nearestSame} of ${chunks.length} pieces nearest a piece in their own voice`);
  },
);

test("who speaks: one sentence where a listener's mouth moves more is still the voice's owner's when the voice is known", (t) => {
  const fps = 8;
  // Voice A speaks 0-2, 6-8, 12-14 and 18-20 s; voice B 3-5, 9-11 and 15-17 s. Face 0's mouth moves
  // with A and face 1's with B, except in A's third sentence, where face 1 (a listener laughing or
  // mouthing along) moves a little more than face 0.
  const a = [0, 6, 12, 18].map((s) => ({ start: s, end: s + 2 }));
  const b = [3, 9, 15].map((s) => ({ start: s, end: s + 2 }));
  const within = (list: Array<{ start: number; end: number }>, s: number) => list.some((x) => s >= x.start && s < x.end);
  const talking = (s: number) => 0.2 + 0.05 * Math.sin(s * 17);
  const face0 = syntheticTrack(0, fps, 21, (s) => (within(a, s) ? (s >= 12 && s < 14 ? 0.16 : talking(s)) : 0.01));
  const face1 = syntheticTrack(1, fps, 21, (s) => (within(b, s) ? talking(s) : s >= 12 && s < 14 ? 0.2 : 0.01));
  const speech = [...a, ...b].sort((x, y) => x.start - y.start);
  const print = (sign: number) => Float64Array.from({ length: 24 }, (_, d) => sign * (d % 2 ? 1 : 0.5));
  const voices: VoiceChunk[] = speech.map((s) => ({ ...s, print: print(within(a, s.start) ? 1 : -1) }));
  const whoAt = (turns: ReturnType<typeof attributeSpeakers>, s: number) => turns.find((x) => s >= x.start && s < x.end)?.trackId;
  const range = { start: 0, end: 21 };
  // Without the voice, the third sentence goes to the listener...
  t.is(whoAt(attributeSpeakers([face0, face1], speech, range, fps, { voicePool: 0 }), 13), 1);
  // ...with it, to the face that moved with that voice in its other sentences; the others unchanged.
  const turns = attributeSpeakers([face0, face1], speech, range, fps, {}, undefined, voices);
  t.deepEqual(
    speech.map((s) => whoAt(turns, s.start + 1)),
    speech.map((s) => (within(a, s.start) ? 0 : 1)),
  );
  // A voice heard once keeps what its own lips say: nothing to pool with.
  const once = voices.map((v, k) => ({ ...v, print: print(k === 4 ? 3 : within(a, v.start) ? 1 : -1) }));
  t.is(whoAt(attributeSpeakers([face0, face1], speech, range, fps, {}, undefined, once), 13), 1);
});

test('who speaks: a voice heard over a slide does not hold back the close-up that shows its speaker next', (t) => {
  const fps = 8;
  // 0-10 s a slide (no face) under voice A; 10-16 s a close-up of face 0, saying A's next sentences
  // with its mouth moving moderately (a small face in a busy shot).
  const speech = [0.5, 3.5, 6.5, 10.5, 13.5].map((s) => ({ start: s, end: s + 2 }));
  const closeUp: FaceTrack = {
    id: 0,
    samples: Array.from({ length: 6 * fps }, (_, i) => {
      const time = 10 + i / fps;
      const talking = speech.some((s) => time >= s.start && time < s.end);
      return {
        time,
        box: { x: 400, y: 100, width: 300, height: 300 },
        score: 0.9,
        mouthActivity: talking ? 0.09 + 0.02 * Math.sin(time * 17) : 0.01,
      };
    }),
  };
  const print = Float64Array.from({ length: 24 }, (_, d) => (d % 2 ? 1 : 0.5));
  const voices: VoiceChunk[] = speech.map((s) => ({ ...s, print }));
  const range = { start: 0, end: 16 };
  const without = attributeSpeakers([closeUp], speech, range, fps, { voicePool: 0 });
  const withVoices = attributeSpeakers([closeUp], speech, range, fps, {}, undefined, voices);
  const whoAt = (turns: ReturnType<typeof attributeSpeakers>, s: number) => turns.find((x) => s >= x.start && s < x.end)?.trackId;
  t.is(whoAt(without, 11), 0);
  t.is(whoAt(withVoices, 1), null);
  t.is(whoAt(withVoices, 11), 0);
  t.is(whoAt(withVoices, 14), 0);
});
