// When someone is heard: Silero VAD over a short's stretch of the job's 16 kHz mono WAV.
import { open } from 'node:fs/promises';
import { readWavInfo } from '../media/wav.js';
import { speechFrames } from '../transcribe/chunked.js';
import { speechProbabilities, VAD_SAMPLE_RATE, type VadResult } from '../transcribe/vad.js';

export interface Interval {
  start: number;
  end: number;
}

/** Pauses shorter than this inside speech are breaths, not the end of a turn. */
const MIN_PAUSE_SEC = 0.3;
/** Speech shorter than this is a click or a cough. */
const MIN_SPEECH_SEC = 0.15;

/** Frame decisions as intervals on the source clock, breaths (pauses under `minPauseSec`) bridged
 *  and blips dropped. */
export function speechIntervals(vad: VadResult, offsetSec: number, minPauseSec = MIN_PAUSE_SEC): Interval[] {
  const frameSec = vad.frameSamples / vad.sampleRate;
  const speech = speechFrames(vad.probs);
  const raw: Interval[] = [];
  for (let i = 0; i < speech.length;) {
    if (!speech[i]) {
      i++;
      continue;
    }
    let j = i;
    while (j < speech.length && speech[j]) j++;
    raw.push({ start: offsetSec + i * frameSec, end: offsetSec + j * frameSec });
    i = j;
  }
  const merged: Interval[] = [];
  for (const r of raw) {
    const last = merged.at(-1);
    if (last && r.start - last.end < minPauseSec) last.end = r.end;
    else merged.push({ ...r });
  }
  return merged.filter((r) => r.end - r.start >= MIN_SPEECH_SEC);
}

/** Mono s16 samples of [start, end) of a PCM s16 WAV, read from the file alone: a short of an
 *  hour-long source does not load the hour. */
export interface WavRange {
  samples: Int16Array;
  /** Source-clock time of samples[0]. */
  startSec: number;
  sampleRate: number;
}

export async function readWavRange(wavPath: string, range: Interval): Promise<WavRange> {
  const info = await readWavInfo(wavPath);
  if (info.bitsPerSample !== 16) throw new Error(`${wavPath}: expected PCM s16, got ${info.bitsPerSample} bits`);
  const frameBytes = 2 * info.channels;
  const frames = Math.floor(info.dataBytes / frameBytes);
  const from = Math.min(frames, Math.max(0, Math.floor(range.start * info.sampleRate)));
  const to = Math.min(frames, Math.max(from, Math.ceil(range.end * info.sampleRate)));
  const buf = Buffer.alloc((to - from) * frameBytes);
  const fh = await open(wavPath, 'r');
  try {
    await fh.read(buf, 0, buf.length, info.dataOffset + from * frameBytes);
  } finally {
    await fh.close();
  }
  const samples = new Int16Array(to - from);
  for (let i = 0; i < samples.length; i++) {
    let sum = 0;
    for (let c = 0; c < info.channels; c++) sum += buf.readInt16LE(i * frameBytes + 2 * c);
    samples[i] = Math.round(sum / info.channels);
  }
  return { samples, startSec: from / info.sampleRate, sampleRate: info.sampleRate };
}

/** Speech heard within [start, end) of the WAV (16 kHz, as analyze-video extracts it). */
export async function speechIn(wavPath: string, range: Interval, signal?: AbortSignal): Promise<Interval[]> {
  return speechInAudio(await readWavRange(wavPath, range), range, signal);
}

/** The same, for a range already read (the caller also needs its samples for the speech envelope). */
export async function speechInAudio(audio: WavRange, range: Interval, signal?: AbortSignal): Promise<Interval[]> {
  if (audio.sampleRate !== VAD_SAMPLE_RATE)
    throw new Error(`speech detection needs ${VAD_SAMPLE_RATE} Hz audio, got ${audio.sampleRate} Hz`);
  if (!audio.samples.length) return [];
  const vad = await speechProbabilities(audio.samples, { signal });
  return speechIntervals(vad, audio.startSec).map((r) => ({ start: r.start, end: Math.min(r.end, range.end) }));
}
