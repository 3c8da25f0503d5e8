// How loud the voice is from moment to moment, on a fine grid: the audio half of lip-audio synchrony.
// A mouth opens and closes with the syllables it says, so the face whose mouth motion follows the ups
// and downs of this envelope is the one whose voice is heard (speakers.ts correlates the two).
import type { WavRange } from './speech.js';

/** Envelope values per second: fine enough to search the lip-audio lag in 10 ms steps. */
export const ENVELOPE_RATE = 100;
/** RMS window: two hops, so each value sees a whole glottal cycle or more of the lowest voices. */
const WINDOW_SEC = 0.02;
/** Quieter than this (dB below full scale) is silence: room noise must not make "syllables". */
const FLOOR_DB = -60;

export interface SpeechEnvelope {
  /** Source-clock time of values[0] (the centre of its window). */
  start: number;
  /** Values per second. */
  rate: number;
  /** Loudness per step, dB relative to full scale, floored at FLOOR_DB. */
  values: Float32Array;
}

/** The envelope of mono s16 samples whose first one is at `startSec` on the source clock. */
export function envelopeOf(samples: Int16Array, sampleRate: number, startSec: number, rate = ENVELOPE_RATE): SpeechEnvelope {
  const hop = Math.max(1, Math.round(sampleRate / rate));
  const window = Math.max(hop, Math.round(WINDOW_SEC * sampleRate));
  const count = samples.length >= window ? Math.floor((samples.length - window) / hop) + 1 : 0;
  const values = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    let sum = 0;
    let prev = samples[i * hop]!;
    for (let j = i * hop + 1; j < i * hop + window; j++) {
      // Pre-emphasis: the consonants and formants that the lips shape count more than the low hum of
      // the voice (and of the room), which carries energy whether the mouth opens or not.
      const v = samples[j]! - 0.97 * prev;
      prev = samples[j]!;
      sum += v * v;
    }
    const rms = Math.sqrt(sum / (window - 1)) / 32768;
    values[i] = Math.max(FLOOR_DB, 20 * Math.log10(rms + 1e-12));
  }
  return { start: startSec + window / 2 / sampleRate, rate: sampleRate / hop, values };
}

/** The envelope of a stretch of the job's WAV, already read. */
export function speechEnvelope(audio: WavRange): SpeechEnvelope {
  return envelopeOf(audio.samples, audio.sampleRate, audio.startSec);
}

/** The envelope's value at source time `t` (linear between steps, held past either end). */
export function envelopeAt(env: SpeechEnvelope, t: number): number {
  if (!env.values.length) return FLOOR_DB;
  const x = (t - env.start) * env.rate;
  if (x <= 0) return env.values[0]!;
  const last = env.values.length - 1;
  if (x >= last) return env.values[last]!;
  const i = Math.floor(x);
  return env.values[i]! + (env.values[i + 1]! - env.values[i]!) * (x - i);
}
