// CMU PocketSphinx (Debian's 0.8 `pocketsphinx_continuous`) as the always-available fallback
// backend: modest accuracy, but word times and posteriors, offline, no model download.
import { access, constants } from 'node:fs/promises';
import path from 'node:path';
import { joinWords, type Word } from '@shorts/common/text/transcript';
import { readWavInfo } from '../media/wav.js';
import { runProcess } from '../run-process.js';
import { progressReporter, type TranscribeOptions, type Transcriber } from './types.js';

export interface PocketsphinxOptions {
  /** `pocketsphinx_continuous` (looked up on PATH) or an absolute path. */
  bin?: string;
  /** Folder holding `en-us/` (acoustic model), `en-us.lm.bin` and `cmudict-en-us.dict`. */
  modelDir?: string;
}

export const POCKETSPHINX_DEFAULTS = {
  bin: 'pocketsphinx_continuous',
  modelDir: '/usr/share/pocketsphinx/model/en-us',
} as const;

export function pocketsphinxModelFiles(modelDir: string) {
  return { hmm: path.join(modelDir, 'en-us'), lm: path.join(modelDir, 'en-us.lm.bin'), dict: path.join(modelDir, 'cmudict-en-us.dict') };
}

/** Undefined when the binary and model are usable, else what is missing and how to get it. */
export async function checkPocketsphinx(opts: PocketsphinxOptions = {}): Promise<string | undefined> {
  const bin = opts.bin ?? POCKETSPHINX_DEFAULTS.bin;
  if (!(await findExecutable(bin))) {
    return `pocketsphinx is not installed: '${bin}' was not found (install the Debian packages pocketsphinx and pocketsphinx-en-us, or configure TRANSCRIBE_API_URL or a Whisper model under models/)`;
  }
  const files = pocketsphinxModelFiles(opts.modelDir ?? POCKETSPHINX_DEFAULTS.modelDir);
  for (const f of Object.values(files)) {
    try {
      await access(f, constants.R_OK);
    } catch {
      return `pocketsphinx model file missing: ${f} (install pocketsphinx-en-us or set POCKETSPHINX_MODEL_DIR)`;
    }
  }
  return undefined;
}

async function findExecutable(bin: string): Promise<string | undefined> {
  const candidates = bin.includes('/')
    ? [bin]
    : (process.env.PATH ?? '')
        .split(path.delimiter)
        .filter(Boolean)
        .map((d) => path.join(d, bin));
  for (const c of candidates) {
    try {
      await access(c, constants.X_OK);
      return c;
    } catch {
      /* next */
    }
  }
  return undefined;
}

/**
 * One `-time yes` word line: `word start end posterior`. Hypothesis lines (the plain sentence) have
 * no numeric columns and never match.
 */
const WORD_LINE = /^(\S+) (\d+\.\d+) (\d+\.\d+) (-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)$/i;

/** Sentence markers, silence and filler/noise tokens (`<sil>`, `[NOISE]`, `++UH++`) are not words. */
const isFiller = (token: string) => /^<.*>$/.test(token) || /^\[.*\]$/.test(token) || /^\+\+.*\+\+$/.test(token);

/** Parses the word lines of `pocketsphinx_continuous -time yes` output into words. */
export function parsePocketsphinxLine(line: string): Word | undefined {
  const m = WORD_LINE.exec(line.trim());
  if (!m) return undefined;
  const token = m[1]!;
  if (isFiller(token)) return undefined;
  // `read(2)` names the second pronunciation of `read`; the word is the same.
  const text = token.replace(/\(\d+\)$/, '');
  if (!text) return undefined;
  const confidence = Math.min(1, Math.max(0, Number(m[4])));
  return { text, start: Number(m[2]), end: Number(m[3]), confidence };
}

export class PocketsphinxTranscriber implements Transcriber {
  readonly name = 'pocketsphinx';
  private readonly bin: string;
  private readonly modelDir: string;

  constructor(opts: PocketsphinxOptions = {}) {
    this.bin = opts.bin ?? POCKETSPHINX_DEFAULTS.bin;
    this.modelDir = opts.modelDir ?? POCKETSPHINX_DEFAULTS.modelDir;
  }

  async transcribe(wavPath: string, opts: TranscribeOptions = {}) {
    const info = await readWavInfo(wavPath);
    // The acoustic model is 16 kHz; pocketsphinx would decode other rates into garbage silently.
    if (info.sampleRate !== 16_000 || info.channels !== 1 || info.bitsPerSample !== 16) {
      throw new Error(`pocketsphinx needs 16 kHz mono s16 WAV, got ${info.sampleRate} Hz, ${info.channels} ch, ${info.bitsPerSample} bit`);
    }
    const { hmm, lm, dict } = pocketsphinxModelFiles(this.modelDir);
    const args = ['-infile', wavPath, '-time', 'yes', '-logfn', '/dev/null', '-hmm', hmm, '-lm', lm, '-dict', dict];
    const report = progressReporter(opts.onProgress);
    const words: Word[] = [];
    await runPocketsphinx(this.bin, args, {
      signal: opts.signal,
      onLine: (line) => {
        const w = parsePocketsphinxLine(line);
        if (w) words.push(w);
        // Each word line carries the end time of what has been decoded so far.
        const m = WORD_LINE.exec(line.trim());
        if (m && info.durationSec > 0) report(Number(m[3]) / info.durationSec);
      },
    });
    report(1);
    return { language: 'en', text: joinWords(words), words, durationSec: info.durationSec, backend: this.name };
  }
}

/** Runs `pocketsphinx_continuous` to its end, handing each stdout line over; rejects on a non-zero
 *  exit (with the end of stderr) or when the signal aborts (the process is killed). */
export async function runPocketsphinx(
  bin: string,
  args: string[],
  opts: { signal?: AbortSignal; onLine: (line: string) => void },
): Promise<void> {
  // Only lines are read: nothing of stdout needs keeping.
  const { code, stderr } = await runProcess(bin, args, opts.signal, { maxOutput: 0, onStdoutLine: opts.onLine });
  if (code !== 0) throw new Error(`pocketsphinx exited with ${code}${stderr ? ': ' + stderr.trim().slice(-500) : ''}`);
}
