// A short's title made from its strongest sentence, not its first words (issue 40): every sentence
// of the short is rated as a hook (a question, a number, a promise, a conclusion, the client's
// topics, a length that reads as a title; less for one that leans on an earlier sentence, for
// logistics and for "um"), and the best one, fillers dropped, cut to at most 60 characters, is the
// title. The agent's picker names its shorts so (and uses it when a language model's title is
// unusable); the coordinator makes the title again, with the same function, when the words under a
// short are corrected.
import { joinWords, type Word } from './transcript.js';
import { bareWord, segmentSentences, type Sentence } from './sentences.js';
import {
  BREATH,
  DEPENDENT_OPENERS,
  HOOK_PHRASES,
  isLogistics,
  isNumberToken,
  PAYOFF_PHRASES,
  phraseText,
  STRONG_WORDS,
  topicMentions,
} from './cues.js';

export { isNumberToken };

export const TITLE_MAX = 60;

/** Words a title does without at its start: they only lead into the sentence. */
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
/** "one" is as often "a" as a count ("one tyre was flat"): alone it is not a figure worth a title (dev seeds). */
const WEAK_NUMBERS = new Set(['one']);
const HESITATIONS = new Set(['um', 'uh', 'er', 'erm', 'hmm', 'ah']);
/** Words a title cut short should not end on ("... watering at…"). */
const DANGLING = new Set(
  'a an the of to and or but in on at for with from by as is are was my your our his her their its this that very'.split(' '),
);
/** A frame before the point ("the answer is that ..."): a title too long does without it first. */
const FRAME =
  /^(?:the (?:answer|reason|truth|point|problem|lesson|thing) is|it turns out|turns out|i think|i believe|we found|the fact is) that /i;
/** Unpunctuated speech has no clause marks: a long title may end before one of these instead. */
const CLAUSE_WORDS = new Set(['and', 'but', 'because', 'so', 'which', 'while', 'when', 'or', 'until', 'unless']);

/**
 * Points a sentence earns as a title (tuned on the selection bench's dev seeds, `bench/selection.ts`).
 * A topic asked for outweighs everything else; logistics and a sentence that needs an earlier one
 * are what a title must never be.
 */
export const TITLE_POINTS = {
  /** The client's `topics`: the title says what they asked for. */
  topic: 5,
  question: 3,
  /** A promise at its start: "here is", "nobody", "the biggest", "turns out"... */
  hook: 2,
  /** A figure: digits or a number word other than a lone "one". */
  number: 2,
  /** A conclusion: "that's why", "the lesson", "in the end"... */
  payoff: 1.5,
  emphasis: 1,
  /** 4-12 words: a title, not a fragment, little to cut. */
  titleLength: 1,
  /** The short's opening: the picker chose the window for it; it wins ties. */
  opening: 0.5,
  tooShort: -3,
  tooLong: -1,
  /** Opens on he/she/it/they/these/so/and/but...: it needs the sentence before. */
  dependent: -3,
  /** Each "um"/"uh" inside. */
  hesitation: -1,
  logistics: -6,
} as const;

export interface TitleOptions {
  /** Lower-cased keywords or phrases the client asked the shorts to be about. */
  topics?: readonly string[];
}

export interface RatedSentence {
  /** Index into the sentences given. */
  index: number;
  points: number;
  /** The cues that earned or cost points, as `TITLE_POINTS` names them. */
  cues: Array<keyof typeof TITLE_POINTS>;
}

/** The words of a sentence without the fillers that only lead into it ("so, um, the..."). */
function contentWords(words: readonly Word[]): Word[] {
  let from = 0;
  while (from < words.length - 1 && (FILLERS.has(bareWord(words[from]!.text)) || BREATH.has(bareWord(words[from]!.text)))) from++;
  return words.slice(from);
}

/** How strong a title each sentence would make; `words` are the transcript's (sentence ids index them). */
export function rateTitleSentences(words: readonly Word[], sentences: readonly Sentence[], opts: TitleOptions = {}): RatedSentence[] {
  return sentences.map((s, index) => {
    const all = words.slice(s.startId, s.endId + 1);
    const content = contentWords(all);
    const text = phraseText(all);
    const opening = phraseText(content);
    const cues: RatedSentence['cues'] = [];
    if (opts.topics?.length && topicMentions(all, opts.topics).size) cues.push('topic');
    if (s.question) cues.push('question');
    if (HOOK_PHRASES.some((p) => opening.startsWith(' ' + p + ' '))) cues.push('hook');
    if (all.some((w) => isNumberToken(w.text) && !WEAK_NUMBERS.has(bareWord(w.text)))) cues.push('number');
    if (PAYOFF_PHRASES.some((p) => text.includes(' ' + p + ' '))) cues.push('payoff');
    if (all.some((w) => STRONG_WORDS.has(bareWord(w.text)))) cues.push('emphasis');
    if (content.length >= 4 && content.length <= 12) cues.push('titleLength');
    if (index === 0) cues.push('opening');
    if (content.length < 4) cues.push('tooShort');
    if (content.length > 16) cues.push('tooLong');
    if (DEPENDENT_OPENERS.has(bareWord(content[0]?.text ?? ''))) cues.push('dependent');
    if (isLogistics(text)) cues.push('logistics');
    const hesitations = content.filter((w) => HESITATIONS.has(bareWord(w.text))).length;
    for (let i = 0; i < hesitations; i++) cues.push('hesitation');
    return { index, points: cues.reduce((sum, c) => sum + TITLE_POINTS[c], 0), cues };
  });
}

/** The sentence the title is made from: the most points, the earliest of equals. */
export function titleSentence(words: readonly Word[], sentences: readonly Sentence[], opts: TitleOptions = {}): RatedSentence | undefined {
  return rateTitleSentences(words, sentences, opts).reduce<RatedSentence | undefined>(
    (best, r) => (!best || r.points > best.points ? r : best),
    undefined,
  );
}

/**
 * The title of a short: its strongest sentence (`titleSentence`), fillers dropped, cut at its first
 * clause mark once three words are in, at most 60 characters, capitalised. `words` are the
 * transcript's words; `sentences` the short's (their ids index `words`).
 */
export function makeTitle(words: readonly Word[], sentences: readonly Sentence[], opts: TitleOptions = {}): string {
  const best = titleSentence(words, sentences, opts);
  if (!best) return '';
  const chosen = sentences[best.index]!;
  let ws = words
    .slice(chosen.startId, chosen.endId + 1)
    .map((w) => w.text.trim())
    .filter(Boolean);
  while (ws.length > 3 && (FILLERS.has(bareWord(ws[0]!)) || BREATH.has(bareWord(ws[0]!)))) ws = ws.slice(1);
  // A clause mark ends the title if enough came before it.
  const clauseEnd = ws.findIndex((w, i) => i >= 3 && /[,;:—–]$/.test(w));
  if (clauseEnd >= 0) ws = ws.slice(0, clauseEnd + 1);
  const text = joinWords(ws.map((text) => ({ text })))
    .replace(/[,;:—–.!…]+$/, '')
    .replace(/\bi(?=$|[\s'’])/g, 'I')
    .trim();
  return fitTitle(text);
}

/**
 * At most `max` characters, never cut inside a word: a long title loses a frame before its point
 * ("the answer is that"), then ends before a clause word ("and", "because"...) when enough comes
 * before it, else at the last whole word that fits, with an ellipsis (and never on "the", "of"...).
 * Only a single word longer than the limit is cut inside.
 */
export function fitTitle(title: string, max = TITLE_MAX): string {
  let text = title.replace(/\s+/g, ' ').trim();
  if (text.length <= max) return capitalise(text);
  text = text.replace(FRAME, '');
  if (text.length <= max) return capitalise(text);
  const words = text.split(' ');
  let clause = -1;
  for (let n = 4; n < words.length; n++) {
    if (!CLAUSE_WORDS.has(bareWord(words[n]!))) continue;
    const head = words.slice(0, n).join(' ');
    if (head.length > max) break;
    if (head.length >= 25) clause = n;
  }
  if (clause > 0)
    return capitalise(
      words
        .slice(0, clause)
        .join(' ')
        .replace(/[,;:—–]+$/, ''),
    );
  let n = 0;
  while (n < words.length && words.slice(0, n + 1).join(' ').length + 1 <= max) n++;
  while (n > 1 && DANGLING.has(bareWord(words[n - 1]!))) n--;
  const head = n ? words.slice(0, n).join(' ') : text.slice(0, max - 1);
  return capitalise(head.replace(/[,;:—–.!?]+$/, '') + '…');
}

export const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * The title the picker would give the words `first`..`last` of a transcript (indices, inclusive):
 * the transcript cut into sentences as the picker cuts it, those in the range (a sentence the range
 * cuts into, as a trim by hand may, counts by its words inside), `makeTitle`.
 */
export function titleFromTranscript(words: readonly Word[], first: number, last: number, opts: TitleOptions = {}): string {
  const sentences = segmentSentences(words, { maxSentenceSec: 30 })
    .filter((s) => s.endId >= first && s.startId <= last)
    .map((s) => ({ ...s, startId: Math.max(s.startId, first), endId: Math.min(s.endId, last) }));
  return makeTitle(words, sentences, opts);
}
