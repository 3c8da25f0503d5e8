// What makes a stretch of talk work as a short, in terms a person would use when picking one by
// hand: it grabs you in the first seconds, it finishes its thought, it asks and answers, it has
// concrete numbers, it moves, it is not dead air. Each feature is 0..1; the weights say how much
// each one matters, and the reason text names the ones that carried a window.
import type { Word } from '@shorts/common/text/transcript';
import { bareWord, type Sentence } from './segments.js';
import { capitalise } from '@shorts/common/text/title';
import { HOOK_PHRASES, isNumberToken, STRONG_WORDS } from '@shorts/common/text/cues';

export { capitalise, isNumberToken };

export interface WindowInput {
  words: readonly Word[];
  sentences: readonly Sentence[];
  /** Optional loudness of [start, end] in dBFS, relative to `baselineDb`. */
  energyDb?: number;
  baselineDb?: number;
}

export interface FeatureScores {
  hook: number;
  complete: number;
  questionAnswer: number;
  numbers: number;
  pace: number;
  energy: number;
  emphasis: number;
  length: number;
  /** Subtracted: dead air inside the window. */
  silence: number;
}

export const WEIGHTS: Record<keyof FeatureScores, number> = {
  hook: 0.25,
  complete: 0.2,
  questionAnswer: 0.2,
  numbers: 0.1,
  pace: 0.1,
  energy: 0.1,
  emphasis: 0.05,
  length: 0.1,
  silence: -1.5,
};

export interface WindowFeatures {
  scores: FeatureScores;
  score: number;
  numberCount: number;
  wordsPerSec: number;
  hookKind?: 'question' | 'promise' | 'number';
  longestGapSec: number;
  durationSec: number;
}

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));

function hookOf(words: readonly Word[], sentences: readonly Sentence[]): WindowFeatures['hookKind'] {
  const t0 = words[0]!.start;
  const opening = words.filter((w) => w.start < t0 + 5);
  const text = ' ' + opening.map((w) => bareWord(w.text)).join(' ') + ' ';
  const first = sentences[0]!;
  if (first.question && first.start < t0 + 5) return 'question';
  if (HOOK_PHRASES.some((p) => text.includes(' ' + p + ' '))) return 'promise';
  if (opening.some((w) => isNumberToken(w.text))) return 'number';
  return undefined;
}

export function scoreWindow(input: WindowInput): WindowFeatures {
  const { words, sentences } = input;
  const durationSec = words[words.length - 1]!.end - words[0]!.start;
  let gapsOverOne = 0;
  let longestGapSec = 0;
  for (let i = 0; i < words.length; i++) {
    if (i > 0) {
      const gap = words[i]!.start - words[i - 1]!.end;
      longestGapSec = Math.max(longestGapSec, gap);
      if (gap > 1) gapsOverOne += gap - 1;
    }
  }
  const numberCount = words.filter((w) => isNumberToken(w.text)).length;
  const emphasisCount = words.filter((w) => STRONG_WORDS.has(bareWord(w.text))).length;
  const wordsPerSec = words.length / Math.max(1, durationSec - gapsOverOne);
  const hookKind = hookOf(words, sentences);
  const last = sentences[sentences.length - 1]!;
  const qIndex = sentences.findIndex((s) => s.question);
  const answered = qIndex >= 0 && sentences.slice(qIndex + 1).some((s) => !s.question && s.endId - s.startId >= 2);

  const scores: FeatureScores = {
    hook: hookKind === 'question' ? 1 : hookKind === 'promise' ? 0.8 : hookKind === 'number' ? 0.6 : 0,
    complete: last.terminal || last.pauseAfter >= 1 ? 1 : last.pauseAfter >= 0.6 ? 0.7 : 0.2,
    questionAnswer: answered ? 1 : 0,
    // Density, not count: padding a figure-rich stretch with small talk should not keep its score.
    numbers: clamp01(((numberCount / Math.max(5, durationSec)) * 10) / 6),
    // Around 2.5-3.5 words/s is lively but followable; much slower drags, much faster blurs.
    pace: clamp01(1 - Math.abs(wordsPerSec - 3) / 2),
    energy:
      input.energyDb !== undefined && input.baselineDb !== undefined && Number.isFinite(input.energyDb)
        ? clamp01(0.5 + (input.energyDb - input.baselineDb) / 6)
        : 0,
    emphasis: clamp01(emphasisCount / 3),
    length:
      durationSec >= 20 && durationSec <= 60
        ? 1
        : durationSec < 20
          ? clamp01(0.5 + (durationSec - 10) / 20)
          : clamp01(1 - (durationSec - 60) / 60),
    // Dead air share, plus a flat penalty for any single gap a viewer would scroll away in.
    silence: clamp01(gapsOverOne / Math.max(1, durationSec) + (longestGapSec > 3 ? 0.3 : 0)),
  };
  const score = (Object.keys(WEIGHTS) as Array<keyof FeatureScores>).reduce((s, k) => s + WEIGHTS[k] * scores[k], 0);
  return { scores, score, numberCount, wordsPerSec, hookKind, longestGapSec, durationSec };
}
