// Test fixture (not a test file): speech synthesised with flite where every word's start time is
// known exactly. Each phrase is synthesised on its own; flite's `-psdur` prints phone end times,
// and the phones are assigned to words by synthesising each word alone with `-ps`.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { readWavPcm, writeWavPcm } from '../node-agent/src/media/wav.js';

const run = promisify(execFile);
export const FLITE = '/usr/bin/flite';
export const fliteAvailable = () => existsSync(FLITE);

export interface RefWord {
  text: string;
  start: number;
  end: number;
}

export interface Synthesised {
  wavPath: string;
  durationSec: number;
  words: RefWord[];
  /** Stretches with no speech at all, from flite's pause phones plus the inserted silence. */
  pauses: Array<{ start: number; end: number }>;
}

const SR = 16_000;
const bare = (w: string) => w.toLowerCase().replace(/[^a-z']/g, '');

/** Phone counts by voice and word: long talks repeat their words, and each count is a flite run. */
const phoneCounts = new Map<string, Promise<number>>();

function phonesOf(word: string, voice: string): Promise<number> {
  const key = `${voice} ${word}`;
  let count = phoneCounts.get(key);
  if (!count) {
    count = countPhones(word, voice);
    phoneCounts.set(key, count);
  }
  return count;
}

async function countPhones(word: string, voice: string): Promise<number> {
  const { stdout } = await run(FLITE, ['-voice', voice, '-ps', '-t', word, '-o', 'none']);
  return stdout
    .trim()
    .split(/\s+/)
    .filter((p) => p && p !== 'pau').length;
}

async function synthPhrase(text: string, voice: string, wavPath: string) {
  const { stdout } = await run(FLITE, ['-voice', voice, '-psdur', '-t', text, '-o', wavPath]);
  const phones = stdout
    .trim()
    .split(/\s+/)
    .map((p) => {
      const [name, end] = p.split(':');
      return { name: name!, end: Number(end) };
    });
  const pcm = await readWavPcm(wavPath);
  if (pcm.sampleRate !== SR || pcm.channels !== 1) throw new Error(`flite voice ${voice} is not 16 kHz mono`);
  const words = text.split(/\s+/).filter((w) => bare(w));
  const spoken: RefWord[] = [];
  let i = 0;
  let prevEnd = 0;
  for (const w of words) {
    while (phones[i]?.name === 'pau') prevEnd = phones[i++]!.end;
    const n = await phonesOf(bare(w), voice);
    const start = prevEnd;
    for (let k = 0; k < n; k++) {
      if (!phones[i] || phones[i]!.name === 'pau') throw new Error(`phone alignment failed for "${w}" in "${text}"`);
      prevEnd = phones[i++]!.end;
    }
    spoken.push({ text: bare(w), start, end: prevEnd });
  }
  if (phones.slice(i).some((p) => p.name !== 'pau')) throw new Error(`phones left over after "${text}"`);
  return { samples: pcm.samples, words: spoken, leadPause: spoken[0]?.start ?? 0, speechEnd: prevEnd };
}

/**
 * Quiet noise (about -62 dBFS, like the noise floor flite leaves around its phrases) rather than
 * digital zeros: real recordings never contain exact silence, and a jump from zeros to the noise
 * floor reads as a speech onset to pocketsphinx. Seeded, so fixtures are reproducible.
 */
function roomTone(samples: number, seed: number): Int16Array {
  let x = (seed + 1) * 2654435761;
  const out = new Int16Array(samples);
  for (let i = 0; i < samples; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = ((x >>> 16) % 61) - 30;
  }
  return out;
}

/**
 * Concatenates phrases (synthesised in a fresh folder under `parent`) with `pauseAfter` seconds of room tone after each; returns the WAV and
 * the reference words with absolute times.
 */
export async function synthesiseTalk(
  parent: string,
  phrases: Array<{ text: string; pauseAfter: number }>,
  voice = 'slt',
): Promise<Synthesised> {
  // A folder per call: tests in one file run concurrently.
  const dir = await mkdtemp(path.join(parent, 'talk-'));
  const parts: Int16Array[] = [];
  const words: RefWord[] = [];
  const pauses: Array<{ start: number; end: number }> = [];
  let offsetSamples = 0;
  let silenceFrom = 0;
  for (const [n, p] of phrases.entries()) {
    const tmp = path.join(dir, `phrase-${n}.wav`);
    const ph = await synthPhrase(p.text, voice, tmp);
    const offset = offsetSamples / SR;
    pauses.push({ start: silenceFrom, end: offset + ph.leadPause });
    for (const w of ph.words) words.push({ text: w.text, start: offset + w.start, end: offset + w.end });
    parts.push(ph.samples);
    offsetSamples += ph.samples.length;
    silenceFrom = offset + ph.speechEnd;
    const gap = Math.round(p.pauseAfter * SR);
    parts.push(roomTone(gap, n));
    offsetSamples += gap;
  }
  pauses.push({ start: silenceFrom, end: offsetSamples / SR });
  const all = new Int16Array(offsetSamples);
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.length;
  }
  const wavPath = path.join(dir, 'talk.wav');
  await writeWavPcm(wavPath, all, SR);
  return { wavPath, durationSec: offsetSamples / SR, words, pauses: pauses.filter((q) => q.end > q.start) };
}

/**
 * Greedy in-order matching of recognised words to reference words (same text, start within
 * `toleranceSec`): counts words found and their timing errors.
 */
export function matchWords(ref: RefWord[], hyp: Array<{ text: string; start: number }>, toleranceSec = 0.3) {
  const errors: number[] = [];
  const used = new Set<number>();
  let matched = 0;
  for (const r of ref) {
    let best = -1;
    for (let j = 0; j < hyp.length; j++) {
      if (used.has(j) || bare(hyp[j]!.text) !== r.text) continue;
      if (Math.abs(hyp[j]!.start - r.start) > 1.5) continue;
      if (best < 0 || Math.abs(hyp[j]!.start - r.start) < Math.abs(hyp[best]!.start - r.start)) best = j;
    }
    if (best < 0) continue;
    used.add(best);
    matched++;
    errors.push(Math.abs(hyp[best]!.start - r.start));
  }
  const within = errors.filter((e) => e <= toleranceSec).length;
  return { matched, recall: matched / ref.length, within, errors, maxError: Math.max(0, ...errors) };
}
