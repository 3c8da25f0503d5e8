// The local automatic short picker: candidate windows that start and end on sentence boundaries,
// scored on features a person would name, best non-overlapping ones kept.
import { joinWords, type Transcript, type Word } from '@shorts/common/text/transcript';
import { capitalise, describeReason, isNumberToken, scoreWindow, type WindowFeatures } from './features.js';
import { bareWord, segmentSentences, type Sentence } from './segments.js';
import { MAX_SHORT_SEC, numberShorts, type Short } from './types.js';

export interface SelectorOptions {
  /** At most this many shorts; default grows with the video, up to 5. */
  maxShorts?: number;
  minSec?: number;
  /** Capped at the contract's 90 s whatever is asked. */
  maxSec?: number;
  /** Loudness in dBFS of a time range of the source, for the energy feature. */
  energy?: (startSec: number, endSec: number) => number;
  /** Gap that ends a sentence for backends without punctuation. */
  pauseSec?: number;
}

/** About one short per 90 s of video, between 1 and 5. */
export function defaultShortCount(durationSec: number): number {
  return Math.min(5, Math.max(1, Math.round(durationSec / 90)));
}

/** Breath kept before the first and after the last word, never reaching into a neighbouring word. */
const LEAD_SEC = 0.15;
const TAIL_SEC = 0.3;

interface Candidate {
  first: number;
  last: number;
  start: number;
  end: number;
  features: WindowFeatures;
}

export function selectShorts(transcript: Transcript, opts: SelectorOptions = {}): Short[] {
  const words = transcript.words;
  if (words.length === 0) return [];
  const maxSec = Math.min(MAX_SHORT_SEC, opts.maxSec ?? MAX_SHORT_SEC) - LEAD_SEC - TAIL_SEC;
  const span = words[words.length - 1]!.end - words[0]!.start;
  // A short video may be one short as a whole.
  const minSec = Math.min(opts.minSec ?? 15, span);
  const sentences = segmentSentences(words, { pauseSec: opts.pauseSec, maxSentenceSec: Math.min(30, maxSec) });
  const baselineDb = opts.energy ? median(sentences.map((s) => opts.energy!(s.start, s.end)).filter(Number.isFinite)) : undefined;

  const candidates: Candidate[] = [];
  for (let i = 0; i < sentences.length; i++) {
    for (let j = i; j < sentences.length; j++) {
      const start = sentences[i]!.start;
      const end = sentences[j]!.end;
      if (end - start > maxSec) break;
      if (end - start < minSec - 1e-9) continue;
      const first = sentences[i]!.startId;
      const last = sentences[j]!.endId;
      const features = scoreWindow({
        words: words.slice(first, last + 1),
        sentences: sentences.slice(i, j + 1),
        energyDb: opts.energy?.(start, end),
        baselineDb,
      });
      candidates.push({ first, last, start, end, features });
    }
  }

  const limit = opts.maxShorts ?? defaultShortCount(transcript.durationSec || span);
  const picked: Candidate[] = [];
  for (const c of candidates.sort((a, b) => b.features.score - a.features.score || a.start - b.start)) {
    if (picked.length >= limit) break;
    // Mostly dead air is never worth a short, even when nothing better is left.
    if (c.features.scores.silence >= 0.5) continue;
    if (picked.some((p) => c.start < p.end && p.start < c.end)) continue;
    picked.push(c);
  }

  return numberShorts(
    picked.map((c) => {
      const prevEnd = c.first > 0 ? words[c.first - 1]!.end : 0;
      const nextStart = c.last + 1 < words.length ? words[c.last + 1]!.start : Math.max(transcript.durationSec, words[c.last]!.end);
      const ws = words.slice(c.first, c.last + 1);
      return {
        title: makeTitle(
          ws,
          sentences.filter((s) => s.startId >= c.first && s.endId <= c.last),
        ),
        reason: describeReason(c.features),
        startTime: round2(Math.max(c.start - LEAD_SEC, (prevEnd + c.start) / 2, 0)),
        endTime: round2(Math.min(c.end + TAIL_SEC, (c.end + nextStart) / 2)),
        startId: c.first,
        endId: c.last,
        text: joinWords(ws),
        score: Math.round(c.features.score * 1000) / 1000,
      };
    }),
  );
}

const TITLE_MAX = 60;
const FILLERS = new Set([
  'so',
  'and',
  'but',
  'well',
  'okay',
  'ok',
  'um',
  'uh',
  'like',
  'yeah',
  'right',
  'now',
  'oh',
  'anyway',
  'then',
  'also',
]);

/**
 * The first salient clause: the opening question if the short opens with one, else the first
 * sentence that carries a number or enough words, cut at a clause mark, fillers dropped.
 */
export function makeTitle(words: readonly Word[], sentences: readonly Sentence[]): string {
  const sentenceWords = (s: Sentence) => words.slice(s.startId - sentences[0]!.startId, s.endId - sentences[0]!.startId + 1);
  const chosen =
    sentences.slice(0, 2).find((s) => s.question) ??
    sentences.slice(0, 3).find((s) => sentenceWords(s).some((w) => isNumberToken(w.text)) && s.endId - s.startId >= 3) ??
    sentences.find((s) => s.endId - s.startId >= 3) ??
    sentences[0];
  let ws = chosen ? sentenceWords(chosen).map((w) => w.text.trim()) : words.map((w) => w.text);
  while (ws.length > 3 && FILLERS.has(bareWord(ws[0]!))) ws = ws.slice(1);
  // A clause mark ends the title if enough came before it.
  const clauseEnd = ws.findIndex((w, i) => i >= 3 && /[,;:—–]$/.test(w));
  if (clauseEnd >= 0) ws = ws.slice(0, clauseEnd + 1);
  let title = joinWords(ws.map((text) => ({ text })))
    .replace(/[,;:—–.!…]+$/, '')
    .trim();
  if (title.length > TITLE_MAX) {
    const cut = title.slice(0, TITLE_MAX - 1);
    title = cut.slice(0, Math.max(cut.lastIndexOf(' '), 20)).replace(/[,;:]+$/, '') + '…';
  }
  return capitalise(title);
}

const round2 = (x: number) => Math.round(x * 100) / 100;

function median(xs: number[]): number | undefined {
  if (!xs.length) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}
