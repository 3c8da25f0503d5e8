// Long audio through any Transcriber: cut into chunks at pauses found by Silero VAD, transcribe the
// chunks in parallel, and put the words back on the source timeline. Cutting inside pauses keeps
// words whole; parallel chunks use every core even with single-threaded backends (pocketsphinx),
// and Whisper-class models cannot take more than 30 s at once anyway.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '@shorts/common/logger';
import { joinWords, type Transcript, type Word } from '@shorts/common/text/transcript';
import { readWavPcm, writeWavPcm } from '../media/wav.js';
import { progressReporter, type TranscribeOptions, type Transcriber } from './types.js';
import { speechProbabilities, VAD_SAMPLE_RATE, type VadResult } from './vad.js';

export interface ChunkPlanOptions {
  /** Hard upper bound on a chunk's length. */
  maxChunkSec?: number;
  /** No cut closer than this to the previous one, so chunks carry enough context. */
  minChunkSec?: number;
  /** Speech starts at this probability and ends below `negThreshold` (hysteresis, as in Silero's own utils). */
  threshold?: number;
  negThreshold?: number;
  /**
   * Silence kept around speech when a chunk's leading or trailing silence is trimmed. Backends
   * need lead-in: with 0.3 s pocketsphinx starts the first word ~0.2 s early (it has too little
   * background to estimate noise from); with 1 s its times match a whole-file run.
   */
  padSec?: number;
}

export interface Chunk {
  index: number;
  startSample: number;
  endSample: number;
  /** Seconds on the source timeline where this chunk's audio begins: exactly startSample / rate. */
  offsetSec: number;
  durationSec: number;
}

interface Pause {
  from: number;
  to: number;
}

const DEFAULT_PLAN = { maxChunkSec: 30, minChunkSec: 5, threshold: 0.5, negThreshold: 0.35, padSec: 1 };

/** Frame-level speech decisions with hysteresis, so one dip inside a word does not end speech. */
export function speechFrames(
  probs: Float32Array,
  threshold = DEFAULT_PLAN.threshold,
  negThreshold = DEFAULT_PLAN.negThreshold,
): Uint8Array {
  const speech = new Uint8Array(probs.length);
  let on = false;
  for (let i = 0; i < probs.length; i++) {
    const p = probs[i]!;
    if (!on && p >= threshold) on = true;
    else if (on && p < negThreshold) on = false;
    speech[i] = on ? 1 : 0;
  }
  return speech;
}

/**
 * Splits the audio into chunks no longer than `maxChunkSec`. Each cut goes in the middle of the
 * longest pause in the last half of the allowed span (the part "near the limit"), else the longest
 * pause anywhere after `minChunkSec`, else, for speech with no pause at all, at the least
 * speech-like frame. Chunks with no speech are dropped; long silence at a chunk's edges is trimmed.
 */
export function planChunks(vad: VadResult, totalSamples: number, opts: ChunkPlanOptions = {}): Chunk[] {
  const o = { ...DEFAULT_PLAN, ...opts };
  const fs = vad.frameSamples;
  const rate = vad.sampleRate;
  const maxFrames = Math.max(1, Math.floor((o.maxChunkSec * rate) / fs));
  const minFrames = Math.min(maxFrames, Math.max(1, Math.floor((o.minChunkSec * rate) / fs)));
  const speech = speechFrames(vad.probs, o.threshold, o.negThreshold);
  const nFrames = speech.length;

  const pauses: Pause[] = [];
  for (let i = 0; i < nFrames;) {
    if (speech[i]) {
      i++;
      continue;
    }
    let j = i;
    while (j < nFrames && !speech[j]) j++;
    pauses.push({ from: i, to: j });
    i = j;
  }

  const cuts: number[] = [0];
  let pos = 0;
  while (nFrames - pos > maxFrames) {
    const limit = pos + maxFrames;
    const pick = (lo: number): number | undefined => {
      let best: { cut: number; len: number } | undefined;
      for (const p of pauses) {
        const a = Math.max(p.from, lo);
        const b = Math.min(p.to, limit);
        if (b <= a) continue;
        // The middle of the pause, unless that lies outside the allowed span.
        const cut = Math.min(b, Math.max(a, Math.round((p.from + p.to) / 2)));
        const len = p.to - p.from;
        if (!best || len > best.len || (len === best.len && cut > best.cut)) best = { cut, len };
      }
      return best?.cut;
    };
    let cut = pick(pos + Math.floor(maxFrames / 2)) ?? pick(pos + minFrames);
    if (cut === undefined || cut <= pos) {
      cut = pos + minFrames;
      for (let f = pos + Math.floor(maxFrames / 2); f < limit; f++) if (vad.probs[f]! < vad.probs[cut]!) cut = f;
    }
    cuts.push(cut);
    pos = cut;
  }
  cuts.push(nFrames);

  const pad = Math.round((o.padSec * rate) / fs);
  const chunks: Chunk[] = [];
  for (let k = 0; k + 1 < cuts.length; k++) {
    const a = cuts[k]!;
    const b = cuts[k + 1]!;
    let first = a;
    while (first < b && !speech[first]) first++;
    if (first === b) continue;
    let last = b - 1;
    while (!speech[last]) last--;
    const startSample = Math.max(a, first - pad) * fs;
    const endSample = Math.min(totalSamples, Math.min(b, last + 1 + pad) * fs);
    chunks.push({
      index: chunks.length,
      startSample,
      endSample,
      offsetSec: startSample / rate,
      durationSec: (endSample - startSample) / rate,
    });
  }
  return chunks;
}

/**
 * The planned chunks cut to [fromSample, toSample) (a job's `range`): what lies outside is never
 * decoded. A chunk cut at the range's edge may cut a word; the caller keeps the words inside.
 */
export function clipChunks(chunks: readonly Chunk[], fromSample: number, toSample: number, rate: number): Chunk[] {
  const clipped: Chunk[] = [];
  for (const c of chunks) {
    const startSample = Math.max(c.startSample, fromSample);
    const endSample = Math.min(c.endSample, toSample);
    if (endSample - startSample < rate * 0.1) continue;
    clipped.push({
      index: clipped.length,
      startSample,
      endSample,
      offsetSec: startSample / rate,
      durationSec: (endSample - startSample) / rate,
    });
  }
  return clipped;
}

export interface ChunkedOptions extends ChunkPlanOptions {
  /** Chunks transcribed at once; the agent's cores for CPU backends. */
  concurrency?: number;
  /** Parent folder for the temporary chunk WAVs (the task's work folder). */
  workDir?: string;
  log?: Logger;
  /** Where the VAD pass ends in the overall progress (the rest is transcription). */
  vadProgressShare?: number;
}

export class ChunkedTranscriber implements Transcriber {
  readonly name: string;

  constructor(
    private readonly inner: Transcriber,
    private readonly opts: ChunkedOptions = {},
  ) {
    this.name = inner.name;
  }

  /** The chunk plan for a 16 kHz WAV, exposed so callers and tests can see where cuts fall. */
  async plan(wavPath: string, signal?: AbortSignal, onProgress?: (f: number) => void) {
    const pcm = await readWavPcm(wavPath);
    if (pcm.sampleRate !== VAD_SAMPLE_RATE) throw new Error(`chunked transcription needs 16 kHz audio, got ${pcm.sampleRate} Hz`);
    const mono = downmix(pcm.samples, pcm.channels);
    const vad = await speechProbabilities(mono, { signal, onProgress });
    return { mono, chunks: planChunks(vad, mono.length, this.opts), durationSec: mono.length / VAD_SAMPLE_RATE };
  }

  async transcribe(wavPath: string, opts: TranscribeOptions = {}): Promise<Transcript> {
    const vadShare = this.opts.vadProgressShare ?? 0.1;
    const report = progressReporter(opts.onProgress);
    const started = Date.now();
    const { mono, chunks, durationSec } = await this.plan(wavPath, opts.signal, (f) => report(f * vadShare));
    this.opts.log?.info('transcription chunks planned', {
      backend: this.inner.name,
      chunks: chunks.length,
      durationSec,
      vadMs: Date.now() - started,
    });
    return this.transcribeChunks(mono, chunks, durationSec, { ...opts, onProgress: (f) => report(vadShare + (1 - vadShare) * f) });
  }

  /**
   * Chunks already planned (by `plan` over the same audio): each one's samples of `mono` decoded
   * alone, its words shifted by its `offsetSec`. A time range of a long source (analyze-range)
   * decodes the chunks the whole source's plan gave it, so its words are the whole-file run's.
   */
  async transcribeChunks(mono: Int16Array, chunks: Chunk[], durationSec: number, opts: TranscribeOptions = {}): Promise<Transcript> {
    const report = progressReporter(opts.onProgress);
    const started = Date.now();
    const dir = await mkdtemp(path.join(this.opts.workDir ?? os.tmpdir(), 'chunks-'));
    // One failed chunk stops the others: the job fails either way, no point burning CPU.
    const ctrl = new AbortController();
    const onOuterAbort = () => ctrl.abort(opts.signal?.reason);
    opts.signal?.addEventListener('abort', onOuterAbort, { once: true });
    try {
      const total = chunks.reduce((s, c) => s + c.durationSec, 0) || 1;
      const done = new Float64Array(chunks.length);
      const update = () => report(done.reduce((s, d, i) => s + d * chunks[i]!.durationSec, 0) / total);
      const results: Word[][] = new Array(chunks.length);
      let language = 'en';
      await runPool(
        chunks,
        Math.max(1, this.opts.concurrency ?? os.cpus().length),
        async (chunk) => {
          const file = path.join(dir, `chunk-${String(chunk.index).padStart(5, '0')}.wav`);
          await writeWavPcm(file, mono.subarray(chunk.startSample, chunk.endSample), VAD_SAMPLE_RATE);
          const t = await this.inner.transcribe(file, {
            signal: ctrl.signal,
            onProgress: (f) => {
              done[chunk.index] = f;
              update();
            },
          });
          await rm(file, { force: true });
          done[chunk.index] = 1;
          update();
          if (t.language) language = t.language;
          results[chunk.index] = t.words.map((w) => ({
            ...w,
            start: round3(w.start + chunk.offsetSec),
            end: round3(w.end + chunk.offsetSec),
          }));
        },
        ctrl,
      );
      const words = results.flat();
      report(1);
      this.opts.log?.info('transcription done', { backend: this.inner.name, words: words.length, durationSec, ms: Date.now() - started });
      return { language, text: joinWords(words), words, durationSec, backend: this.inner.name };
    } finally {
      opts.signal?.removeEventListener('abort', onOuterAbort);
      await rm(dir, { recursive: true, force: true });
    }
  }
}

/** Millisecond rounding hides float noise from the offset addition without moving any word. */
const round3 = (x: number) => Math.round(x * 1000) / 1000;

function downmix(samples: Int16Array, channels: number): Int16Array {
  if (channels === 1) return samples;
  const n = Math.floor(samples.length / channels);
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let c = 0; c < channels; c++) s += samples[i * channels + c]!;
    out[i] = Math.round(s / channels);
  }
  return out;
}

/** Runs `fn` over items with at most `limit` in flight; the first failure aborts the rest. */
async function runPool<T>(items: T[], limit: number, fn: (item: T) => Promise<void>, ctrl: AbortController): Promise<void> {
  let next = 0;
  let failure: unknown;
  const worker = async () => {
    while (next < items.length && !ctrl.signal.aborted) {
      const item = items[next++]!;
      try {
        await fn(item);
      } catch (err) {
        failure ??= err;
        ctrl.abort(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure !== undefined) throw failure;
  if (ctrl.signal.aborted) throw ctrl.signal.reason ?? new Error('aborted');
}
