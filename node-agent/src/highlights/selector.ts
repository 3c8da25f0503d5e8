// The local automatic short picker: candidate windows that start and end on sentence boundaries,
// scored on features a person would name, best non-overlapping ones kept.
import { joinWords, type Transcript } from '@shorts/common/text/transcript';
import { scoreShort, type ScoredWindow } from './score.js';
import { makeTitle } from '@shorts/common/text/title';

export { makeTitle };
import { segmentSentences } from './segments.js';
import { MAX_SHORT_SEC, numberShorts, type Short } from './types.js';
import type { TopicSpot } from '../transcribe/keyword-spotting.js';

export interface SelectorOptions {
  /** At most this many shorts; default grows with the video, up to 5. */
  maxShorts?: number;
  /** A short's length, lead-in and tail included (default 15-90 s; the job's options say 15-60). */
  minSec?: number;
  maxSec?: number;
  /** Loudness in dBFS of a time range of the source, for the energy part. */
  energy?: (startSec: number, endSec: number) => number;
  /** Gap that ends a sentence for backends without punctuation. */
  pauseSec?: number;
  /** Lower-cased keywords or phrases the shorts should be about. */
  topics?: readonly string[];
  /** Only sentences wholly inside this stretch of the source are picked from. */
  range?: { start: number; end: number } | null;
  /** Where the audio says a topic was spoken (keyword spotting), for topics the transcript misheard. */
  topicSpots?: readonly TopicSpot[];
}

/** About one short per 90 s of video, between 1 and 5. */
export function defaultShortCount(durationSec: number): number {
  return Math.min(5, Math.max(1, Math.round(durationSec / 90)));
}

/** Breath kept before the first and after the last word (at most 0.3 s each, issue 40), never
 *  reaching past the middle of the gap to a neighbouring word. */
const LEAD_SEC = 0.15;
const TAIL_SEC = 0.3;

/** A spotted topic counts for a window when it lies inside, give or take the recogniser's clock. */
const SPOT_SLACK_SEC = 0.2;

/** With topics, windows whose topic match is under this share of the best one's are left out (tuned on the selection bench's dev seeds). */
const TOPIC_FOCUS = 0.8;

interface Candidate {
  first: number;
  last: number;
  start: number;
  end: number;
  scored: ScoredWindow;
}

export function selectShorts(transcript: Transcript, opts: SelectorOptions = {}): Short[] {
  const words = transcript.words;
  if (words.length === 0) return [];
  const maxSec = (opts.maxSec ?? MAX_SHORT_SEC) - LEAD_SEC - TAIL_SEC;
  const sentencesAll = segmentSentences(words, { pauseSec: opts.pauseSec, maxSentenceSec: Math.min(30, maxSec) });
  const range = opts.range;
  const sentences = range ? sentencesAll.filter((s) => s.start >= range.start - 0.05 && s.end <= range.end + 0.05) : sentencesAll;
  if (!sentences.length) return [];
  const span = sentences.at(-1)!.end - sentences[0]!.start;
  // A short video may be one short as a whole.
  const minSec = Math.min(opts.minSec ?? 15, span);
  const topics = opts.topics ?? [];
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
      const scored = scoreShort(words, {
        words: words.slice(first, last + 1),
        sentences: sentences.slice(i, j + 1),
        energyDb: opts.energy?.(start, end),
        baselineDb,
        topics,
        spots: opts.topicSpots?.filter((x) => x.start >= start - SPOT_SLACK_SEC && x.end <= end + SPOT_SLACK_SEC),
      });
      candidates.push({ first, last, start, end, scored });
    }
  }

  // Whole thoughts: a window whose first sentence leans on an earlier one is not a short; the
  // window that starts earlier (with its antecedent) is a candidate of its own. Only when every
  // window leans on something is one kept, rather than none.
  let pool = candidates.filter((c) => !c.scored.dependentOpening && c.scored.features.scores.silence < 0.5);
  if (!pool.length) pool = candidates.filter((c) => c.scored.features.scores.silence < 0.5);
  // Topics asked for: only windows that mention one, while there are any.
  // Topics asked for: only windows that are about one (near the best topic match there is: a
  // window naming the topic in passing, or only by a word of the same stem, gives way), while there are any.
  if (topics.length && pool.some((c) => c.scored.topicsHit.length)) {
    const best = Math.max(...pool.map((c) => c.scored.scores.topicMatch ?? 0));
    pool = pool.filter((c) => c.scored.topicsHit.length && (c.scored.scores.topicMatch ?? 0) >= TOPIC_FOCUS * best);
  }

  const limit = opts.maxShorts ?? defaultShortCount(transcript.durationSec || span);
  const picked: Candidate[] = [];
  for (const c of pool.sort(
    (a, b) => b.scored.score - a.scored.score || b.scored.features.score - a.scored.features.score || a.start - b.start,
  )) {
    if (picked.length >= limit) break;
    if (picked.some((p) => c.start < p.end && p.start < c.end)) continue;
    picked.push(c);
  }

  return numberShorts(
    picked.map((c) => {
      const prevEnd = c.first > 0 ? words[c.first - 1]!.end : 0;
      const onset = opts.energy && baselineDb !== undefined ? speechOnset(c.start, prevEnd, opts.energy, baselineDb) : c.start;
      const nextStart = c.last + 1 < words.length ? words[c.last + 1]!.start : Math.max(transcript.durationSec, words[c.last]!.end);
      const ws = words.slice(c.first, c.last + 1);
      return {
        title: makeTitle(
          words,
          sentences.filter((s) => s.startId >= c.first && s.endId <= c.last),
          { topics },
        ),
        reason: c.scored.reason,
        startTime: round3(Math.max(onset - LEAD_SEC, (prevEnd + onset) / 2, range ? range.start : 0, 0)),
        endTime: round3(Math.min(c.end + TAIL_SEC, (c.end + nextStart) / 2, range ? range.end : Infinity)),
        startId: c.first,
        endId: c.last,
        text: joinWords(ws),
        score: c.scored.score,
        scores: c.scored.scores,
      };
    }),
  );
}
/** How far back of its first recognised word a short may start, where the audio shows the sentence
 *  had begun (a first word the recogniser dropped or placed late). */
const ONSET_LOOKBACK_SEC = 1;
/** Sound this far under the talk's median loudness is not speech. */
const ONSET_FLOOR_DB = 25;
/** Quiet this long is a pause between sentences; shorter is a stop consonant or a breath between words. */
const ONSET_PAUSE_SEC = 0.2;
const ONSET_STEP_SEC = 0.02;

/**
 * Where the speech that the first recognised word belongs to began: walking back from that word in
 * 20 ms steps to the last pause (ONSET_PAUSE_SEC of quiet), never into the previous recognised word
 * (reaching it, the speech after the quiet before it). When the speech runs on past
 * ONSET_LOOKBACK_SEC, any cut falls inside it, and the word's own start is kept.
 */
export function speechOnset(
  firstStart: number,
  prevEnd: number,
  energy: (startSec: number, endSec: number) => number,
  baselineDb: number,
): number {
  const floor = baselineDb - ONSET_FLOOR_DB;
  const earliest = firstStart - ONSET_LOOKBACK_SEC;
  // The pause before the earliest onset allowed may lie before it.
  const limit = Math.max(prevEnd, earliest - ONSET_PAUSE_SEC);
  let speechFrom = firstStart;
  for (let t = firstStart; t - ONSET_STEP_SEC >= limit - 1e-9; t -= ONSET_STEP_SEC) {
    if (energy(t - ONSET_STEP_SEC, t) > floor) speechFrom = t - ONSET_STEP_SEC;
    else if (speechFrom - (t - ONSET_STEP_SEC) >= ONSET_PAUSE_SEC - 1e-9) break;
    if (speechFrom < earliest - 1e-9) return firstStart;
  }
  return speechFrom;
}

// Word times are in milliseconds: a coarser rounding could push the lead-in or tail past 0.3 s.
const round3 = (x: number) => Math.round(x * 1000) / 1000;

function median(xs: number[]): number | undefined {
  if (!xs.length) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}
