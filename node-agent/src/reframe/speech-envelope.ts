// How loud the voice is from moment to moment, on a fine grid: the audio half of lip-audio synchrony.
// A mouth opens and closes with the syllables it says, so the face whose mouth motion follows the ups
// and downs of this envelope is the one whose voice is heard (speakers.ts correlates the two).
import type { Interval, WavRange } from './speech.js';

/** Envelope values per second: fine enough to search the lip-audio lag in 10 ms steps. */
export const ENVELOPE_RATE = 100;
/** RMS window: two hops, so each value sees a whole glottal cycle or more of the lowest voices. */
const WINDOW_SEC = 0.02;
/** Pre-emphasis: the consonants and formants that the lips shape count more than the low hum of the
 *  voice (and of the room), which carries energy whether the mouth opens or not. */
const PRE_EMPHASIS = 0.97;
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
      const v = samples[j]! - PRE_EMPHASIS * prev;
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

/** How far before voice activity's start a turn's first sound is looked for, seconds. */
const ONSET_LOOKBACK_SEC = 0.5;
/** A dip shorter than this inside the first syllables (a stop's closure) does not end the sound. */
const ONSET_GAP_SEC = 0.08;
/** Sound this far above the stretch's quiet level (its 20th percentile) is the voice, dB. */
const ONSET_ABOVE_FLOOR_DB = 20;

/**
 * Speech intervals whose starts are moved back to the first sound of their first syllable: voice
 * activity decides on 32 ms frames and a probability that rises over several of them, so it can hear
 * a soft onset a frame or several late, and a turn's start is where a cut to the new speaker belongs.
 * A start moves back only over contiguous sound (dips under ONSET_GAP_SEC allowed), never into the
 * interval before and at most ONSET_LOOKBACK_SEC.
 */
export function soundOnsets(speech: Interval[], env: SpeechEnvelope): Interval[] {
  if (!env.values.length) return speech;
  const sorted = Float32Array.from(env.values).sort();
  const loud = sorted[Math.floor(sorted.length * 0.2)]! + ONSET_ABOVE_FLOOR_DB;
  const step = 1 / env.rate;
  return speech.map((interval, k) => {
    const earliest = Math.max(k > 0 ? speech[k - 1]!.end : -Infinity, interval.start - ONSET_LOOKBACK_SEC, env.start);
    let start = interval.start;
    let quiet = 0;
    for (let t = interval.start - step; t >= earliest; t -= step) {
      if (envelopeAt(env, t) >= loud) {
        start = t;
        quiet = 0;
      } else if ((quiet += step) > ONSET_GAP_SEC) break;
    }
    return { start, end: interval.end };
  });
}
