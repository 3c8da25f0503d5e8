// The transcript shape every transcription backend produces and every later stage (highlight
// picking, captions) consumes. Times are seconds from the start of the source audio.

export interface Word {
  text: string;
  start: number;
  end: number;
  /** 0..1 where the backend reports one; absent otherwise (never invented). */
  confidence?: number;
}

export interface Transcript {
  /** BCP-47-ish language code, `en` for the English-only backends. */
  language: string;
  text: string;
  words: Word[];
  durationSec: number;
  /** Which backend produced it, for logs and for judging quality later. */
  backend: string;
}

/** Joins words into display text without a space before closing punctuation. */
export function joinWords(words: readonly Pick<Word, 'text'>[]): string {
  let out = '';
  for (const w of words) {
    const t = w.text.trim();
    if (!t) continue;
    out += out === '' || /^[.,!?;:%)\]}'’]/.test(t) ? t : ' ' + t;
  }
  return out;
}

/**
 * Lower-cased word tokens with punctuation removed, for comparing what was said rather than how it
 * was written: "Country," and "country" are the same word, "don't" stays one word.
 */
export function normaliseWords(text: string): string[] {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[‘’ʼ`]/g, "'")
    .replace(/[-–—/]/g, ' ')
    .replace(/[^\p{L}\p{N}'\s]/gu, ' ')
    .split(/\s+/)
    .map((w) => w.replace(/^'+|'+$/g, ''))
    .filter(Boolean);
}

/** Word-level Levenshtein distance (substitutions + deletions + insertions). */
export function wordEditDistance(ref: readonly string[], hyp: readonly string[]): number {
  let prev = Array.from({ length: hyp.length + 1 }, (_, j) => j);
  for (let i = 1; i <= ref.length; i++) {
    const cur = [i];
    for (let j = 1; j <= hyp.length; j++) {
      const sub = prev[j - 1]! + (ref[i - 1] === hyp[j - 1] ? 0 : 1);
      cur[j] = Math.min(sub, prev[j]! + 1, cur[j - 1]! + 1);
    }
    prev = cur;
  }
  return prev[hyp.length]!;
}

/**
 * Word error rate of `hypText` against `refText` after normalisation. Can exceed 1 when the
 * hypothesis inserts many words. An empty reference gives 0 for an empty hypothesis, else 1.
 */
export function wordErrorRate(refText: string, hypText: string): number {
  const ref = normaliseWords(refText);
  const hyp = normaliseWords(hypText);
  if (ref.length === 0) return hyp.length === 0 ? 0 : 1;
  return wordEditDistance(ref, hyp) / ref.length;
}
