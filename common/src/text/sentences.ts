// Sentences, or what passes for them: Whisper-class backends punctuate, pocketsphinx does not,
// so a sentence ends at terminal punctuation or at a pause long enough to breathe.
import type { Word } from './transcript.js';

export interface Sentence {
  /** Word indexes into the transcript, inclusive. */
  startId: number;
  endId: number;
  start: number;
  end: number;
  text: string;
  /** Ends on `.`, `!` or `?`. */
  terminal: boolean;
  question: boolean;
  /** Silence before the next sentence (Infinity after the last). */
  pauseAfter: number;
  pauseBefore: number;
}

export interface SegmentOptions {
  /**
   * A gap at least this long ends a sentence even without punctuation. Without punctuation the
   * default adapts to the speaker: three times the median gap between words, 0.3 to 0.6 s, since
   * unpunctuated backends leave pauses as the only clue and some speakers barely pause.
   */
  pauseSec?: number;
  /** Sentences longer than this are split at their widest gaps, so windows can still end inside. */
  maxSentenceSec?: number;
}

const TERMINAL = /[.!?…]["'”’)\]]*$/;
const QUESTION_MARK = /\?["'”’)\]]*$/;
/** Without punctuation a question is recognised by how it opens. */
const QUESTION_OPENERS = new Set([
  'what',
  'why',
  'how',
  'who',
  'whom',
  'whose',
  'when',
  'where',
  'which',
  'is',
  'are',
  'was',
  'were',
  'do',
  'does',
  'did',
  'can',
  'could',
  'would',
  'should',
  'will',
  'have',
  'has',
  'shall',
  'may',
  "isn't",
  "aren't",
  "don't",
  "doesn't",
  "didn't",
  "won't",
  "can't",
]);
const LEAD_FILLERS = new Set(['so', 'and', 'but', 'well', 'okay', 'ok', 'now', 'um', 'uh', 'like', 'right', 'oh', 'then']);

export const bareWord = (t: string) => t.toLowerCase().replace(/[^\p{L}\p{N}']/gu, '');

function looksLikeQuestion(words: readonly Word[], punctuated: boolean): boolean {
  if (punctuated) return QUESTION_MARK.test(words[words.length - 1]!.text);
  // Skip one leading filler: "so why does this work" is still a question.
  const first = words.map((w) => bareWord(w.text)).find((w, i) => !(i === 0 && LEAD_FILLERS.has(w)));
  return first !== undefined && QUESTION_OPENERS.has(first) && words.length >= 3;
}

export function segmentSentences(words: readonly Word[], opts: SegmentOptions = {}): Sentence[] {
  const maxSentenceSec = opts.maxSentenceSec ?? 30;
  // Punctuation is trusted only when the backend produces it at all.
  const punctuated = words.some((w) => TERMINAL.test(w.text));
  const pauseSec = opts.pauseSec ?? (punctuated ? 0.6 : Math.min(0.6, Math.max(0.3, 3 * medianGap(words))));
  const ranges: Array<[number, number]> = [];
  let from = 0;
  for (let i = 0; i < words.length; i++) {
    const gap = i + 1 < words.length ? words[i + 1]!.start - words[i]!.end : Infinity;
    if ((punctuated && TERMINAL.test(words[i]!.text)) || gap >= pauseSec || i === words.length - 1) {
      ranges.push(...splitLong(words, from, i, maxSentenceSec));
      from = i + 1;
    }
  }
  return ranges.map(([a, b], k) => {
    const ws = words.slice(a, b + 1);
    const next = ranges[k + 1];
    const prev = ranges[k - 1];
    return {
      startId: a,
      endId: b,
      start: words[a]!.start,
      end: words[b]!.end,
      text: ws.map((w) => w.text).join(' '),
      terminal: TERMINAL.test(words[b]!.text),
      question: looksLikeQuestion(ws, punctuated),
      pauseAfter: next ? words[next[0]]!.start - words[b]!.end : Infinity,
      pauseBefore: prev ? words[a]!.start - words[prev[1]]!.end : Infinity,
    };
  });
}

/** Splits [a, b] at its widest inter-word gap (the middlemost on ties) until every piece fits `maxSec`. */
function splitLong(words: readonly Word[], a: number, b: number, maxSec: number): Array<[number, number]> {
  if (b <= a || words[b]!.end - words[a]!.start <= maxSec) return [[a, b]];
  const mid = (words[a]!.start + words[b]!.end) / 2;
  let cut = a;
  let best = -Infinity;
  for (let i = a; i < b; i++) {
    const gap = words[i + 1]!.start - words[i]!.end;
    // Gaps are compared at 10 ms resolution, so the middle decides between near-equal ones.
    const score = Math.round(gap * 100) * 1e6 - Math.abs(words[i]!.end - mid);
    if (score > best) {
      best = score;
      cut = i;
    }
  }
  return [...splitLong(words, a, cut, maxSec), ...splitLong(words, cut + 1, b, maxSec)];
}

function medianGap(words: readonly Word[]): number {
  const gaps = words
    .slice(1)
    .map((w, i) => Math.max(0, w.start - words[i]!.end))
    .sort((a, b) => a - b);
  return gaps.length ? gaps[Math.floor(gaps.length / 2)]! : 0;
}
