// Audio for analysis: one canonical format (16 kHz mono signed 16-bit WAV) that every transcription
// backend and the VAD accept, plus the few PCM helpers the analysis needs.
import { spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { open, readFile, writeFile } from 'node:fs/promises';
import { inputGuard } from '@shorts/common/media/input-guard';
import { toolEnv } from '@shorts/common/media/tools';

export const ANALYSIS_SAMPLE_RATE = 16_000;

/** A source that has no audio stream at all; retrying elsewhere will not help. */
export class NoAudioTrackError extends Error {
  constructor(inputPath: string) {
    super(`the video has no audio track to transcribe (${inputPath.split('/').pop()})`);
    this.name = 'NoAudioTrackError';
  }
}

/** The audio track exists but is silent; a job on it can only produce empty shorts. */
export class SilentAudioError extends Error {
  constructor(readonly levels: AudioLevels) {
    super(`the audio track is silent (loudest 50 ms at ${formatDb(levels.loudestWindowDb)} dBFS), so there is no speech to transcribe`);
    this.name = 'SilentAudioError';
  }
}

export interface ExtractOptions {
  signal?: AbortSignal;
  startSec?: number;
  durationSec?: number;
  /** Output size limit (`-fs`): stops the decode where timestamps cannot be trusted to. */
  maxBytes?: number;
}

/**
 * Decodes the first audio stream of `inputPath` into a 16 kHz mono s16 WAV. The protocol whitelist
 * keeps a crafted media file (playlists, concat lists) from making ffmpeg open network or other
 * local resources on its own.
 */
export async function extractAudio(ffmpegPath: string, inputPath: string, outWav: string, opts: ExtractOptions = {}): Promise<void> {
  const args = ['-nostdin', '-hide_banner', '-loglevel', 'error', ...inputGuard()];
  if (opts.startSec !== undefined) args.push('-ss', String(opts.startSec));
  args.push('-i', inputPath);
  if (opts.durationSec !== undefined) args.push('-t', String(opts.durationSec));
  if (opts.maxBytes !== undefined) args.push('-fs', String(Math.ceil(opts.maxBytes)));
  args.push('-map', '0:a:0', '-vn', '-sn', '-dn', '-ac', '1', '-ar', String(ANALYSIS_SAMPLE_RATE), '-c:a', 'pcm_s16le', '-f', 'wav', '-y', outWav);
  const { code, stderr } = await runProcess(ffmpegPath, args, opts.signal, { env: toolEnv() });
  if (code === 0) return;
  if (/matches no streams|does not contain any stream/i.test(stderr)) throw new NoAudioTrackError(inputPath);
  throw new Error(`ffmpeg could not extract audio (exit ${code}): ${stderr.trim().split('\n').slice(-3).join(' | ')}`);
}

export interface WavPcm {
  sampleRate: number;
  channels: number;
  /** Interleaved signed 16-bit samples. */
  samples: Int16Array;
}

/** Reads a PCM s16 WAV, walking the chunk list because ffmpeg and sox put LIST chunks before data. */
export async function readWavPcm(path: string): Promise<WavPcm> {
  return parseWav(await readFile(path), path);
}

export function parseWav(buf: Buffer, label = 'wav'): WavPcm {
  if (buf.length < 12 || buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') {
    throw new Error(`${label}: not a RIFF/WAVE file`);
  }
  let off = 12;
  let fmt: { format: number; channels: number; sampleRate: number; bits: number } | undefined;
  while (off + 8 <= buf.length) {
    const id = buf.toString('ascii', off, off + 4);
    const size = buf.readUInt32LE(off + 4);
    const body = off + 8;
    if (id === 'fmt ') {
      fmt = { format: buf.readUInt16LE(body), channels: buf.readUInt16LE(body + 2), sampleRate: buf.readUInt32LE(body + 4), bits: buf.readUInt16LE(body + 14) };
      // WAVE_FORMAT_EXTENSIBLE carries the real format in its sub-format GUID.
      if (fmt.format === 0xfffe && size >= 26) fmt.format = buf.readUInt16LE(body + 24);
    } else if (id === 'data') {
      if (!fmt) throw new Error(`${label}: data chunk before fmt chunk`);
      if (fmt.format !== 1 || fmt.bits !== 16) throw new Error(`${label}: expected PCM s16, got format ${fmt.format} with ${fmt.bits} bits`);
      // A streamed WAV may carry a placeholder size; trust the file length instead.
      const end = Math.min(buf.length, body + size);
      const bytes = (end - body) & ~1;
      // WAV is little-endian like every host we run on, so the bytes can be used as they are:
      // a view when aligned (an hour of audio is 115 MB; no second copy), else one byte copy.
      const at = buf.byteOffset + body;
      let samples: Int16Array;
      if (at % 2 === 0) samples = new Int16Array(buf.buffer, at, bytes / 2);
      else {
        samples = new Int16Array(bytes / 2);
        Buffer.from(samples.buffer).set(buf.subarray(body, body + bytes));
      }
      return { sampleRate: fmt.sampleRate, channels: fmt.channels, samples };
    }
    off = body + size + (size & 1);
  }
  throw new Error(`${label}: no data chunk`);
}

export function encodeWav(samples: Int16Array, sampleRate: number, channels = 1): Buffer {
  const header = Buffer.alloc(44);
  const dataBytes = samples.length * 2;
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * channels * 2, 28);
  header.writeUInt16LE(channels * 2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(dataBytes, 40);
  const body = Buffer.from(samples.buffer, samples.byteOffset, dataBytes);
  return Buffer.concat([header, body]);
}

export async function writeWavPcm(path: string, samples: Int16Array, sampleRate: number, channels = 1): Promise<void> {
  await writeFile(path, encodeWav(samples, sampleRate, channels));
}

/** Mono float samples in -1..1, averaging channels. */
export function toMonoFloat32(pcm: WavPcm): Float32Array {
  const n = Math.floor(pcm.samples.length / pcm.channels);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let sum = 0;
    for (let c = 0; c < pcm.channels; c++) sum += pcm.samples[i * pcm.channels + c]!;
    out[i] = sum / pcm.channels / 32768;
  }
  return out;
}

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
  const stream = createReadStream(wavPath, { start: info.dataOffset, end: info.dataOffset + frames * frameBytes - 1, highWaterMark: 1 << 20 });
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

export interface WavInfo {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  durationSec: number;
  /** Where the samples start in the file, and how many bytes of them there are. */
  dataOffset: number;
  dataBytes: number;
}

/** Format and duration of a PCM WAV from its header alone, without reading the samples. */
export async function readWavInfo(path: string): Promise<WavInfo> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    const head = Buffer.alloc(Math.min(size, 4096));
    await fh.read(head, 0, head.length, 0);
    if (head.length < 12 || head.toString('ascii', 0, 4) !== 'RIFF' || head.toString('ascii', 8, 12) !== 'WAVE') {
      throw new Error(`${path}: not a RIFF/WAVE file`);
    }
    let off = 12;
    let fmt: Omit<WavInfo, 'durationSec' | 'dataOffset' | 'dataBytes'> & { byteRate: number } | undefined;
    while (off + 8 <= head.length) {
      const id = head.toString('ascii', off, off + 4);
      const chunk = head.readUInt32LE(off + 4);
      if (id === 'fmt ') {
        fmt = { channels: head.readUInt16LE(off + 10), sampleRate: head.readUInt32LE(off + 12), byteRate: head.readUInt32LE(off + 16), bitsPerSample: head.readUInt16LE(off + 22) };
      }
      if (id === 'data') {
        if (!fmt) throw new Error(`${path}: data chunk before fmt chunk`);
        // A streamed WAV may carry a placeholder size; the file length bounds it.
        const bytes = Math.max(0, Math.min(chunk, size - off - 8));
        return {
          sampleRate: fmt.sampleRate, channels: fmt.channels, bitsPerSample: fmt.bitsPerSample,
          durationSec: fmt.byteRate ? bytes / fmt.byteRate : 0, dataOffset: off + 8, dataBytes: bytes,
        };
      }
      off += 8 + chunk + (chunk & 1);
    }
    throw new Error(`${path}: no data chunk in the first 4 KiB`);
  } finally {
    await fh.close();
  }
}

interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a binary to completion, keeping output; an abort kills it and rejects with the abort reason. */
export function runProcess(bin: string, args: string[], signal?: AbortSignal, opts: { maxOutput?: number; env?: NodeJS.ProcessEnv } = {}): Promise<ProcessResult> {
  const max = opts.maxOutput ?? 64 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(opts.env ? { env: opts.env } : {}) });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      if (stdout.length < max) stdout += d;
    });
    // Only the tail of stderr matters for error messages; keep it bounded.
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr = (stderr + d).slice(-16_384);
    });
    const onAbort = () => child.kill('SIGKILL');
    signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (err) => {
      signal?.removeEventListener('abort', onAbort);
      reject(err);
    });
    child.on('close', (code) => {
      signal?.removeEventListener('abort', onAbort);
      if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
      resolve({ code, stdout, stderr });
    });
  });
}
