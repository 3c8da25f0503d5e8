// How loud a recording is: its levels (is it silent?) and the loudness of any stretch of it, for
// the highlight selector's energy feature.
import { createReadStream } from 'node:fs';
import { readWavInfo } from './wav.js';

export interface AudioLevels {
  durationSec: number;
  /** Whole-file RMS in dBFS (-Infinity for digital silence). */
  rmsDb: number;
  peakDb: number;
  /** RMS of the loudest 50 ms window: one loud moment is enough to count as "not silent". */
  loudestWindowDb: number;
}

const toDb = (linear: number) => (linear > 0 ? 20 * Math.log10(linear) : -Infinity);
const formatDb = (db: number) => (Number.isFinite(db) ? db.toFixed(1) : '-inf');

/** The audio track exists but is silent; a job on it can only produce empty shorts. */
export class SilentAudioError extends Error {
  constructor(readonly levels: AudioLevels) {
    super(`the audio track is silent (loudest 50 ms at ${formatDb(levels.loudestWindowDb)} dBFS), so there is no speech to transcribe`);
    this.name = 'SilentAudioError';
  }
}

export function measureLevels(mono: Float32Array, sampleRate: number): AudioLevels {
  const win = Math.max(1, Math.round(sampleRate * 0.05));
  let total = 0;
  let peak = 0;
  let loudest = 0;
  for (let start = 0; start < mono.length; start += win) {
    const end = Math.min(mono.length, start + win);
    let sum = 0;
    for (let i = start; i < end; i++) {
      const v = mono[i]!;
      sum += v * v;
      const a = Math.abs(v);
      if (a > peak) peak = a;
    }
    total += sum;
    loudest = Math.max(loudest, sum / (end - start));
  }
  return {
    durationSec: mono.length / sampleRate,
    rmsDb: toDb(Math.sqrt(total / Math.max(1, mono.length))),
    peakDb: toDb(peak),
    loudestWindowDb: toDb(Math.sqrt(loudest)),
  };
}

/**
 * Speech peaks far above -45 dBFS in any usable recording; a track whose loudest 50 ms stays below
 * it is silence, hum or dither.
 */
export const SILENCE_THRESHOLD_DB = -45;

export function isSilent(levels: AudioLevels, thresholdDb = SILENCE_THRESHOLD_DB): boolean {
  return !(levels.loudestWindowDb > thresholdDb);
}

/** Throws SilentAudioError for a silent WAV; returns its levels otherwise. Reads the file streaming. */
export async function assertAudible(wavPath: string, thresholdDb = SILENCE_THRESHOLD_DB): Promise<AudioLevels> {
  const { levels } = await scanWav(wavPath);
  if (isSilent(levels, thresholdDb)) throw new SilentAudioError(levels);
  return levels;
}

/** Resolution of the loudness lookups: fine enough for word-level windows, small for long audio. */
const ENERGY_WINDOW_SEC = 0.01;
/** measureLevels' window for "the loudest 50 ms", in energy windows. */
const LOUDEST_SPAN = 5;

export interface WavScan {
  levels: AudioLevels;
  /** RMS level in dBFS between two times, for the highlight selector's energy feature. */
  loudness: (startSec: number, endSec: number) => number;
}

/**
 * One streaming pass over a PCM s16 WAV: its levels, and the energy of every 10 ms of it, so any
 * stretch's loudness is answered from prefix sums. Memory follows the window count (an hour is
 * 3 MB), never the sample count (an hour of 16 kHz audio is 115 MB).
 */
export async function scanWav(wavPath: string): Promise<WavScan> {
  const info = await readWavInfo(wavPath);
  if (info.bitsPerSample !== 16) throw new Error(`${wavPath}: expected PCM s16, got ${info.bitsPerSample} bits`);
  const { sampleRate, channels } = info;
  const frameBytes = 2 * channels;
  const frames = Math.floor(info.dataBytes / frameBytes);
  const win = Math.max(1, Math.round(sampleRate * ENERGY_WINDOW_SEC));
  const prefix = new Float64Array(Math.ceil(frames / win) + 1); // prefix[i]: energy of windows before i
  let frame = 0;
  let windowSum = 0;
  let peak = 0;
  let loudest = 0;
  let spanSum = 0;
  let spanFrames = 0;
  let carry: Buffer = Buffer.alloc(0);
  const stream = createReadStream(wavPath, {
    start: info.dataOffset,
    end: info.dataOffset + frames * frameBytes - 1,
    highWaterMark: 1 << 20,
  });
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    const buf = carry.length ? Buffer.concat([carry, chunk]) : chunk;
    const whole = buf.length - (buf.length % frameBytes);
    for (let off = 0; off < whole; off += frameBytes) {
      let sum = 0;
      for (let c = 0; c < channels; c++) sum += buf.readInt16LE(off + 2 * c);
      const v = sum / channels / 32768;
      const sq = v * v;
      windowSum += sq;
      spanSum += sq;
      spanFrames++;
      const a = Math.abs(v);
      if (a > peak) peak = a;
      frame++;
      if (frame % win === 0) {
        prefix[frame / win] = prefix[frame / win - 1]! + windowSum;
        windowSum = 0;
        if (spanFrames >= win * LOUDEST_SPAN) {
          loudest = Math.max(loudest, spanSum / spanFrames);
          spanSum = 0;
          spanFrames = 0;
        }
      }
    }
    carry = buf.subarray(whole);
  }
  const windows = Math.ceil(frame / win);
  if (frame % win !== 0) prefix[windows] = prefix[windows - 1]! + windowSum;
  if (spanFrames) loudest = Math.max(loudest, spanSum / spanFrames);
  const total = prefix[windows] ?? 0;
  const levels: AudioLevels = {
    durationSec: frame / sampleRate,
    rmsDb: toDb(Math.sqrt(total / Math.max(1, frame))),
    peakDb: toDb(peak),
    loudestWindowDb: toDb(Math.sqrt(loudest)),
  };
  const loudness = (startSec: number, endSec: number) => {
    const a = Math.max(0, Math.min(windows, Math.floor((startSec * sampleRate) / win)));
    const b = Math.max(0, Math.min(windows, Math.ceil((endSec * sampleRate) / win)));
    if (b <= a) return -Infinity;
    const n = Math.min(frame, b * win) - a * win;
    return toDb(Math.sqrt((prefix[b]! - prefix[a]!) / Math.max(1, n)));
  };
  return { levels, loudness };
}

/** Loudness of any stretch of a WAV, read streaming; the highlight selector's energy feature. */
export async function loudnessOfWav(wavPath: string): Promise<(startSec: number, endSec: number) => number> {
  return (await scanWav(wavPath)).loudness;
}

/** RMS level in dBFS of mono samples between two times, for per-window energy features. */
export function rmsDbBetween(mono: Float32Array, sampleRate: number, startSec: number, endSec: number): number {
  const a = Math.max(0, Math.floor(startSec * sampleRate));
  const b = Math.min(mono.length, Math.ceil(endSec * sampleRate));
  if (b <= a) return -Infinity;
  let sum = 0;
  for (let i = a; i < b; i++) sum += mono[i]! * mono[i]!;
  return toDb(Math.sqrt(sum / (b - a)));
}
