// A short's score as a person choosing clips to post would give it, in five parts (0-100 each):
// does it grab you (hook), does it finish its thought (completeness), can it be understood with no
// context from outside it (standalone), is it delivered with life (energy), is it about what the
// client asked for (topicMatch). Computed offline from the transcript and the audio's loudness; the
// total ranks candidate windows, and `reason` says in one sentence which parts carried it.
import type { ShortScores } from '@shorts/common/tasks/analyze-video';
import type { Word } from '@shorts/common/text/transcript';
import { bareWord, type Sentence } from './segments.js';
import { scoreWindow, type WindowFeatures } from './features.js';
import type { TopicSpot } from '../transcribe/keyword-spotting.js';
import { BREATH, DEPENDENT_OPENERS, isLogistics, isNumberToken, PAYOFF_PHRASES, phraseText, topicMentions } from '@shorts/common/text/cues';

// Where the tests and the bench have long found it.
export { stem } from '@shorts/common/text/cues';

const FILLER_WORDS = new Set(['um', 'uh', 'er', 'erm', 'hmm', 'ah']);
/** Sentence openers that start a new thought: met inside a window, the window holds two. */
const NEW_THOUGHT = [
  'here is',
  "here's",
  'here are',
  'let me tell you',
  'nobody',
  'the biggest',
  'the secret',
  'what if',
  'did you know',
  'imagine',
  'three things',
  'two things',
  'the first thing',
];

export interface ScoreInput {
  words: readonly Word[];
  sentences: readonly Sentence[];
  /** Loudness of the window and of the whole talk (dBFS), for energy. */
  energyDb?: number;
  baselineDb?: number;
  /** Lower-cased keywords or phrases asked for; empty: no topic asked. */
  topics: readonly string[];
  /** Topics heard said inside the window by keyword spotting (pocketsphinx only). */
  spots?: readonly TopicSpot[];
}

export interface ScoredWindow {
  score: number;
  scores: ShortScores;
  reason: string;
  features: WindowFeatures;
  /** The first sentence leans on one before it. */
  dependentOpening: boolean;
  /** Share of the window's sentences that are logistics or filler. */
  logisticsShare: number;
  /** Topics found in the window, as asked. */
  topicsHit: string[];
}

/** Weights of the parts in the total; topicMatch's weight applies only when topics were asked. */
export const PART_WEIGHTS = { hook: 0.2, completeness: 0.25, standalone: 0.35, energy: 0.1, topicMatch: 0.3 } as const;

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));
const pct = (x: number) => Math.round(clamp01(x) * 100);

export function opensDependent(words: readonly Word[], sentence: Sentence): boolean {
  for (let i = sentence.startId; i <= sentence.endId && i < sentence.startId + 3; i++) {
    const w = bareWord(words[i]?.text ?? '');
    if (BREATH.has(w)) continue;
    return DEPENDENT_OPENERS.has(w);
  }
  return false;
}

/**
 * Scores one window of whole sentences. `allWords` are the transcript's words (sentence ids index
 * them); `input.words` are the window's.
 */
export function scoreShort(allWords: readonly Word[], input: ScoreInput): ScoredWindow {
  const { words, sentences, topics } = input;
  const features = scoreWindow(input);
  const f = features.scores;
  const dependentOpening = opensDependent(allWords, sentences[0]!);
  const sentenceTexts = sentences.map((s) => phraseText(allWords.slice(s.startId, s.endId + 1)));
  const logisticsShare = sentenceTexts.filter(isLogistics).length / sentences.length;
  const fillerShare = words.filter((w) => FILLER_WORDS.has(bareWord(w.text))).length / words.length;

  // The last sentence (or two, when the last is short) carries the payoff.
  const closing = sentenceTexts.slice(-2).join(' ');
  const lastWords = allWords.slice(sentences.at(-1)!.startId, sentences.at(-1)!.endId + 1);
  const payoff = PAYOFF_PHRASES.some((p) => closing.includes(' ' + p + ' ')) || lastWords.some((w) => isNumberToken(w.text)) ? 1 : 0;

  const hook = Math.max(f.hook, 0.5 * f.emphasis, sentenceTexts[0] && isLogistics(sentenceTexts[0]) ? 0 : 0.25);
  const completeness = 0.55 * f.complete + 0.45 * Math.max(payoff, f.questionAnswer) - 0.5 * f.silence;
  // Logistics at either edge is what a viewer meets first or last: worse than in the middle.
  const logisticsEdge = isLogistics(sentenceTexts[0]!) || isLogistics(sentenceTexts.at(-1)!);
  const standalone = (dependentOpening ? 0.35 : 1) * (1 - logisticsShare) * (logisticsEdge ? 0.6 : 1) - 2 * fillerShare;
  const loud = input.energyDb !== undefined && input.baselineDb !== undefined && Number.isFinite(input.energyDb);
  const energy = loud ? 0.5 * f.energy + 0.3 * f.pace + 0.2 * f.emphasis : 0.7 * f.pace + 0.3 * f.emphasis;

  const mentions = mentionsHeard(topicMentions(words, topics), input.spots ?? []);
  const topicsHit = [...mentions.keys()];
  const mentionCount = [...mentions.values()].reduce((a, b) => a + b, 0);
  // Mentions per 10 s: a short about the topic, not a long one that mentions it once in passing.
  const density = (mentionCount * 10) / Math.max(5, features.durationSec);
  const topicMatch = topics.length ? (topicsHit.length ? 0.4 + 0.6 * clamp01(density) : 0) : null;

  const scores: ShortScores = {
    hook: pct(hook),
    completeness: pct(completeness),
    standalone: pct(standalone),
    energy: pct(energy),
    topicMatch: topicMatch === null ? null : pct(topicMatch),
  };
  const weighted = weightedParts(scores);
  // A second thought starting inside (a question or a new hook after its first sentence): two
  // shorts run together, each worth more alone.
  const newThoughts = sentences
    .slice(1)
    // Without punctuation a "question" is guessed from its first word ("when you track..."): too
    // loose to split a window on.
    .filter((x, i) => (x.question && x.terminal) || NEW_THOUGHT.some((p) => sentenceTexts[i + 1]!.startsWith(' ' + p + ' '))).length;
  // Outside the parts: dead air costs points.
  const score = Math.round(Math.max(0, Math.min(100, weighted * Math.pow(0.85, newThoughts) - 60 * f.silence)));
  return {
    score,
    scores,
    reason: reasonOf(scores, features, { dependentOpening, logisticsShare, topicsHit, payoff: payoff > 0, score }),
    features,
    dependentOpening,
    logisticsShare,
    topicsHit,
  };
}

/** The parts' weighted mean (0-100), topicMatch counted only when topics were asked. */
export function weightedParts(scores: ShortScores): number {
  const parts: Array<[number, number]> = [
    [scores.hook, PART_WEIGHTS.hook],
    [scores.completeness, PART_WEIGHTS.completeness],
    [scores.standalone, PART_WEIGHTS.standalone],
    [scores.energy, PART_WEIGHTS.energy],
    ...(scores.topicMatch === null ? [] : ([[scores.topicMatch, PART_WEIGHTS.topicMatch]] as Array<[number, number]>)),
  ];
  return parts.reduce((s, [v, w]) => s + v * w, 0) / parts.reduce((s, [, w]) => s + w, 0);
}

/**
 * A total from parts a language model judged (hook, completeness, standalone, topic match) and the
 * audio's own (energy): their weighted mean, less the window's dead air as in scoreShort.
 */
export function totalOfParts(scores: ShortScores, silence: number): number {
  return Math.round(Math.max(0, Math.min(100, weightedParts(scores) - 60 * silence)));
}

/** A topic's mentions: as read in the transcript or as spotted in the audio, whichever found more
 *  (the two mostly find the same mentions, so they are not added). */
function mentionsHeard(read: Map<string, number>, spots: readonly TopicSpot[]): Map<string, number> {
  const heard = new Map(read);
  const spotted = new Map<string, number>();
  for (const s of spots) spotted.set(s.topic, (spotted.get(s.topic) ?? 0) + 1);
  for (const [topic, n] of spotted) heard.set(topic, Math.max(n, heard.get(topic) ?? 0));
  return heard;
}

/** One sentence from the parts: the strongest two or three, and the weakest when it is weak. */
function reasonOf(
  s: ShortScores,
  f: WindowFeatures,
  x: { dependentOpening: boolean; logisticsShare: number; topicsHit: string[]; payoff: boolean; score: number },
): string {
  const hookWords =
    f.hookKind === 'question'
      ? 'opens with a question'
      : f.hookKind === 'promise'
        ? 'opens with a hook that promises a payoff'
        : f.hookKind === 'number'
          ? 'opens with a concrete number'
          : 'opens with strong, emphatic wording';
  const completeWords =
    f.scores.questionAnswer > 0
      ? 'asks a question and answers it'
      : x.payoff
        ? f.numberCount > 0
          ? `ends on a payoff with ${f.numberCount} number${f.numberCount === 1 ? '' : 's'}`
          : 'ends on a conclusion'
        : 'ends on a complete thought';
  const standaloneWords = 'makes sense on its own';
  const energyWords =
    f.scores.energy >= 0.6
      ? 'has a louder, more energetic delivery than average'
      : `keeps a lively pace (${f.wordsPerSec.toFixed(1)} words/s)`;
  const topicWords = x.topicsHit.length ? `is about ${x.topicsHit.map((t) => `"${t}"`).join(' and ')}` : '';
  const strengths: Array<[number, string]> = [
    [s.hook, hookWords],
    [s.completeness, completeWords],
    [s.standalone, standaloneWords],
    [s.energy, energyWords],
    ...(s.topicMatch !== null && topicWords ? ([[s.topicMatch + 1, topicWords]] as Array<[number, string]>) : []),
  ];
  const good = strengths
    .filter(([v, text]) => v >= 60 && text)
    .sort((a, b) => b[0] - a[0])
    .slice(0, 3)
    .map(([, text]) => text);
  const weak: string[] = [];
  if (x.dependentOpening) weak.push('its first sentence leans on what came before');
  else if (x.logisticsShare > 0.3) weak.push('part of it is logistics or small talk');
  if (s.topicMatch === 0) weak.push('it does not mention the topics asked for');
  if (f.scores.silence > 0.05) weak.push(`it has some dead air (longest pause ${f.longestGapSec.toFixed(1)} s)`);
  const head = `Scores ${x.score}/100`;
  const body = good.length ? `: it ${joinList(good)}` : ': a self-contained stretch of speech';
  const tail = weak.length ? `, though ${joinList(weak)}` : '';
  return `${head}${body}${tail}.`;
}

function joinList(items: string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}
