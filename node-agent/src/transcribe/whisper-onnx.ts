// Whisper-class model run locally through sherpa-onnx (encoder/decoder/tokens exported to ONNX).
// Word times come from sherpa's token timestamps, which it computes from the decoder's
// cross-attention (DTW over the alignment heads) when the decoder was exported with attention
// outputs; see models/README.md for which files have them.
import { readdirSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Logger } from '@shorts/common/logger';
import { joinWords, type Transcript, type Word } from '@shorts/common/text/transcript';
import { readWavPcm, toMonoFloat32 } from '../media/wav.js';
import { runProcess } from '../run-process.js';
import type { TranscribeOptions, Transcriber } from './types.js';
import { spreadWords } from './openai-compatible.js';

/** Whisper sees at most 30 s per pass; the chunker keeps chunks under this. */
export const WHISPER_MAX_SEC = 30;

export interface WhisperModelFiles {
  dir: string;
  encoder: string;
  decoder: string;
  tokens: string;
}

/**
 * Finds `*encoder*.onnx`, `*decoder*.onnx` and `*tokens.txt` in `models/whisper-*` folders.
 * int8 files win (several times faster on CPU for a small loss); an explicit dir wins over search.
 */
export function findWhisperModel(modelsDir: string, explicitDir?: string): WhisperModelFiles | undefined {
  const dirs = explicitDir
    ? [explicitDir]
    : existsSync(modelsDir)
      ? readdirSync(modelsDir, { withFileTypes: true })
          .filter((d) => d.isDirectory() && d.name.startsWith('whisper-'))
          .map((d) => path.join(modelsDir, d.name))
          .sort()
      : [];
  for (const dir of dirs) {
    if (!existsSync(dir)) continue;
    const files = readdirSync(dir);
    const pick = (re: RegExp) => {
      const found = files.filter((f) => re.test(f)).sort((a, b) => Number(b.includes('int8')) - Number(a.includes('int8')));
      return found[0] ? path.join(dir, found[0]) : undefined;
    };
    const encoder = pick(/encoder.*\.onnx$/);
    const decoder = pick(/decoder.*\.onnx$/);
    const tokens = pick(/tokens\.txt$/);
    if (encoder && decoder && tokens) return { dir, encoder, decoder, tokens };
  }
  return undefined;
}

export interface SherpaResult {
  text?: string;
  tokens?: string[];
  timestamps?: number[];
  durations?: number[];
  lang?: string;
}

/**
 * Whisper's byte-level BPE marks a word start with a leading space; tokens without one continue
 * the previous word, and punctuation-only tokens attach to it without stretching its end.
 */
export function mergeTokensToWords(
  tokens: readonly string[],
  starts: readonly number[],
  durations: readonly number[] | undefined,
  totalSec: number,
): Word[] {
  const words: Word[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i]!;
    if (!tok || /^<\|.*\|>$/.test(tok)) continue;
    const start = starts[i] ?? 0;
    const end = durations?.[i] !== undefined ? start + durations[i]! : (starts[i + 1] ?? totalSec);
    const punctuation = /^\s*[^\p{L}\p{N}\s]+\s*$/u.test(tok);
    const prev = words[words.length - 1];
    if (prev && (punctuation || !/^\s/.test(tok))) {
      prev.text += tok.trim();
      if (!punctuation) prev.end = Math.max(prev.end, end);
      continue;
    }
    if (!tok.trim()) continue;
    words.push({ text: tok.trim(), start, end: Math.max(start, end) });
  }
  return words.map((w) => ({ ...w, start: Math.min(w.start, totalSec), end: Math.min(w.end, totalSec) }));
}

/**
 * Loads the model in a child process and reports why it does not load. A child because sherpa-onnx
 * exits the whole process on some bad files (an unparsable tokens file) instead of throwing.
 */
export async function probeWhisperModel(model: WhisperModelFiles, timeoutMs = 120_000): Promise<string | undefined> {
  const sherpaPath = createRequire(import.meta.url).resolve('sherpa-onnx-node');
  const config = {
    featConfig: { sampleRate: 16_000, featureDim: 80 },
    modelConfig: { whisper: { encoder: model.encoder, decoder: model.decoder }, tokens: model.tokens, numThreads: 1, debug: 0 },
  };
  const script = `require(${JSON.stringify(sherpaPath)}).OfflineRecognizer.createAsync(${JSON.stringify(config)}).then(() => process.exit(0), (e) => { console.error(e.message); process.exit(3); });`;
  const { code, stderr } = await runProcess(process.execPath, ['-e', script], AbortSignal.timeout(timeoutMs)).catch((err: Error) => ({
    code: -1,
    stderr: err.message,
  }));
  return code === 0 ? undefined : stderr.trim().split('\n').slice(-2).join(' ') || `exit code ${code}`;
}

type SherpaModule = {
  OfflineRecognizer: {
    createAsync(config: unknown): Promise<{
      createStream(): { acceptWaveform(w: { samples: Float32Array; sampleRate: number }): void };
      decodeAsync(stream: unknown): Promise<SherpaResult>;
    }>;
  };
};

export interface WhisperOnnxOptions {
  model: WhisperModelFiles;
  /** Language code, or '' to let a multilingual model detect it. `.en` models ignore it. */
  language?: string;
  numThreads?: number;
  log?: Logger;
}

export class WhisperOnnxTranscriber implements Transcriber {
  readonly name: string;
  private recognizer?: ReturnType<SherpaModule['OfflineRecognizer']['createAsync']>;
  /** One decode at a time: each already uses `numThreads` cores, and sharing is not documented safe. */
  private queue: Promise<unknown> = Promise.resolve();
  private warnedNoTimestamps = false;

  constructor(private readonly opts: WhisperOnnxOptions) {
    this.name = `whisper-onnx:${path.basename(opts.model.dir)}`;
  }

  private load() {
    this.recognizer ??= (createRequire(import.meta.url)('sherpa-onnx-node') as SherpaModule).OfflineRecognizer.createAsync({
      featConfig: { sampleRate: 16_000, featureDim: 80 },
      modelConfig: {
        whisper: {
          encoder: this.opts.model.encoder,
          decoder: this.opts.model.decoder,
          language: this.opts.language ?? '',
          task: 'transcribe',
          enableTokenTimestamps: true,
        },
        tokens: this.opts.model.tokens,
        numThreads: this.opts.numThreads ?? 2,
        provider: 'cpu',
        debug: 0,
      },
    });
    return this.recognizer;
  }

  async transcribe(wavPath: string, opts: TranscribeOptions = {}): Promise<Transcript> {
    const pcm = await readWavPcm(wavPath);
    if (pcm.sampleRate !== 16_000) throw new Error(`whisper needs 16 kHz audio, got ${pcm.sampleRate} Hz`);
    const samples = toMonoFloat32(pcm);
    const durationSec = samples.length / 16_000;
    if (durationSec > WHISPER_MAX_SEC + 0.5)
      throw new Error(
        `whisper takes at most ${WHISPER_MAX_SEC} s at once (got ${durationSec.toFixed(1)} s); wrap it in ChunkedTranscriber`,
      );
    const run = this.queue.then(async () => {
      if (opts.signal?.aborted) throw opts.signal.reason ?? new Error('aborted');
      const recognizer = await this.load();
      const stream = recognizer.createStream();
      stream.acceptWaveform({ samples, sampleRate: 16_000 });
      return recognizer.decodeAsync(stream);
    });
    this.queue = run.catch(() => undefined);
    opts.onProgress?.(0);
    const result = await run;
    opts.onProgress?.(1);
    const tokens = result.tokens ?? [];
    let words: Word[];
    if (tokens.length && result.timestamps?.length === tokens.length) {
      words = mergeTokensToWords(
        tokens,
        result.timestamps,
        result.durations?.length === tokens.length ? result.durations : undefined,
        durationSec,
      );
    } else {
      // A decoder exported without attention outputs gives text only; spread it so captions still
      // land inside the chunk (which the chunker already cut to the speech).
      if (!this.warnedNoTimestamps) {
        this.warnedNoTimestamps = true;
        this.opts.log?.warn('whisper model gives no token timestamps; word times are estimated', { model: this.opts.model.decoder });
      }
      words = spreadWords(result.text ?? '', 0, durationSec);
    }
    return {
      language: result.lang?.replace(/[<|>]/g, '') || this.opts.language || 'en',
      text: joinWords(words),
      words,
      durationSec,
      backend: this.name,
    };
  }
}
