// Any server speaking OpenAI's `/v1/audio/transcriptions` (OpenAI itself, faster-whisper-server,
// LocalAI, a Whisper on a GPU box): the way to get Whisper-quality text when one is configured.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { joinWords, type Transcript, type Word } from '@shorts/common/text/transcript';
import { retry } from '@shorts/common/retry';
import { readWavInfo } from '../media/wav.js';
import type { TranscribeOptions, Transcriber } from './types.js';

export interface OpenAiTranscriberOptions {
  /** Base URL; `/v1/audio/transcriptions` is appended (a trailing `/v1` is tolerated). */
  url: string;
  apiKey?: string;
  model?: string;
  /** ISO-639-1 hint; omitted lets the server detect it. */
  language?: string;
  timeoutMs?: number;
  /** Extra tries after a 429, a 5xx or a network error. */
  retries?: number;
  fetchImpl?: typeof fetch;
}

interface VerboseJson {
  text?: string;
  language?: string;
  duration?: number;
  words?: Array<{ word?: string; text?: string; start?: number; end?: number; probability?: number }>;
  segments?: Array<{ start?: number; end?: number; text?: string }>;
}

/** verbose_json names the language ("english"); everything else here uses codes. */
const LANGUAGE_CODES: Record<string, string> = {
  english: 'en',
  spanish: 'es',
  french: 'fr',
  german: 'de',
  italian: 'it',
  portuguese: 'pt',
  dutch: 'nl',
  russian: 'ru',
  polish: 'pl',
  turkish: 'tr',
  japanese: 'ja',
  chinese: 'zh',
  korean: 'ko',
  arabic: 'ar',
  hindi: 'hi',
  ukrainian: 'uk',
  swedish: 'sv',
  czech: 'cs',
  greek: 'el',
  romanian: 'ro',
  indonesian: 'id',
};

export function transcriptionsEndpoint(url: string): string {
  const base = url.replace(/\/+$/, '').replace(/\/v1$/, '');
  return `${base}/v1/audio/transcriptions`;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    body: string,
  ) {
    super(`transcription endpoint answered HTTP ${status}: ${body.slice(0, 300)}`);
  }
}

export class OpenAiCompatibleTranscriber implements Transcriber {
  readonly name = 'openai-compatible';

  constructor(private readonly opts: OpenAiTranscriberOptions) {
    new URL(transcriptionsEndpoint(opts.url)); // fail at construction on a malformed URL
  }

  async transcribe(wavPath: string, opts: TranscribeOptions = {}): Promise<Transcript> {
    const info = await readWavInfo(wavPath);
    const audio = await readFile(wavPath);
    opts.onProgress?.(0);
    const body = await this.postWithRetries(audio, path.basename(wavPath), opts.signal);
    opts.onProgress?.(1);
    const words = mapWords(body, info.durationSec);
    const lang = (body.language ?? this.opts.language ?? '').toLowerCase();
    return {
      language: LANGUAGE_CODES[lang] ?? (lang || 'und'),
      text: body.text?.trim() || joinWords(words),
      words,
      durationSec: body.duration ?? info.durationSec,
      backend: this.name,
    };
  }

  private postWithRetries(audio: Buffer, filename: string, signal?: AbortSignal): Promise<VerboseJson> {
    // Waits of 0.5 s, 1 s, ...: a busy (429), failing (5xx) or unreachable server is tried again.
    return retry(() => this.post(audio, filename, signal), {
      tries: (this.opts.retries ?? 2) + 1,
      first: 500,
      signal,
      retryable: (err) =>
        err instanceof HttpError ? err.status === 429 || err.status >= 500 : !signal?.aborted && err instanceof TypeError,
    });
  }

  private async post(audio: Buffer, filename: string, signal?: AbortSignal): Promise<VerboseJson> {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(audio)], { type: 'audio/wav' }), filename);
    form.append('model', this.opts.model ?? 'whisper-1');
    form.append('response_format', 'verbose_json');
    form.append('timestamp_granularities[]', 'word');
    // Segment times too: the fallback when a server ignores word granularity.
    form.append('timestamp_granularities[]', 'segment');
    if (this.opts.language) form.append('language', this.opts.language);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.opts.apiKey) headers.authorization = `Bearer ${this.opts.apiKey}`;
    const timeout = AbortSignal.timeout(this.opts.timeoutMs ?? 10 * 60_000);
    const res = await (this.opts.fetchImpl ?? fetch)(transcriptionsEndpoint(this.opts.url), {
      method: 'POST',
      body: form,
      headers,
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    const text = await res.text();
    if (!res.ok) throw new HttpError(res.status, text);
    try {
      return JSON.parse(text) as VerboseJson;
    } catch {
      throw new Error(`transcription endpoint did not answer JSON: ${text.slice(0, 200)}`);
    }
  }
}

/**
 * Word times from `words`; if a server returns only segments, each segment's time is shared out
 * over its words by length (rough, but keeps captions near the speech); with neither, over the file.
 */
export function mapWords(body: VerboseJson, durationSec: number): Word[] {
  const fromWords = (body.words ?? [])
    .map((w) => ({ text: (w.word ?? w.text ?? '').trim(), start: Number(w.start), end: Number(w.end), confidence: w.probability }))
    .filter((w) => w.text && Number.isFinite(w.start) && Number.isFinite(w.end))
    .map((w) =>
      w.confidence === undefined
        ? { text: w.text, start: w.start, end: Math.max(w.start, w.end) }
        : { ...w, end: Math.max(w.start, w.end) },
    );
  if (fromWords.length) return fromWords;
  const segments = body.segments?.length ? body.segments : [{ start: 0, end: body.duration ?? durationSec, text: body.text ?? '' }];
  return segments.flatMap((s) => spreadWords(s.text ?? '', Number(s.start) || 0, Number(s.end) || 0));
}

export function spreadWords(text: string, start: number, end: number): Word[] {
  const tokens = text.split(/\s+/).filter(Boolean);
  const total = tokens.reduce((n, t) => n + t.length, 0) || 1;
  const span = Math.max(0, end - start);
  let at = start;
  return tokens.map((t) => {
    const d = (span * t.length) / total;
    const w = { text: t, start: at, end: at + d };
    at += d;
    return w;
  });
}
