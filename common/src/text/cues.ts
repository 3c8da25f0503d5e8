// The words that tell a hook, a payoff, a sentence leaning on an earlier one, and talk about the
// talk (logistics) from the talk itself. One list for everyone who needs them: the agent's picker
// scores windows with them (node-agent/src/highlights/score.ts, features.ts) and titles are made
// from the sentence they rate strongest (title.ts, also run by the coordinator on corrected words).
import { bareWord } from './sentences.js';
import type { Word } from './transcript.js';

export const NUMBER_WORDS = new Set([
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
  'twenty',
  'thirty',
  'forty',
  'fifty',
  'sixty',
  'seventy',
  'eighty',
  'ninety',
  'hundred',
  'thousand',
  'million',
  'billion',
  'trillion',
  'percent',
  'half',
  'double',
  'triple',
  'dozen',
  'first',
  'second',
  'third',
  'twice',
]);

export const isNumberToken = (t: string) => /\d/.test(t) || NUMBER_WORDS.has(bareWord(t));

/** Openers that promise something: the viewer stays to get it. */
export const HOOK_PHRASES = [
  'here is',
  'here are',
  "here's",
  'the secret',
  'the truth',
  'the reason',
  'the problem',
  'the biggest',
  'the best',
  'the worst',
  'the one thing',
  'nobody',
  'no one',
  'most people',
  'everyone',
  'you need',
  'you have to',
  "you don't",
  'you should',
  'stop',
  'never',
  'imagine',
  'did you know',
  'the mistake',
  'what if',
  'let me tell you',
  'i learned',
  'turns out',
  'the key',
  'this is why',
  'this is how',
];
export const STRONG_WORDS = new Set([
  'amazing',
  'incredible',
  'insane',
  'crazy',
  'huge',
  'massive',
  'shocking',
  'surprising',
  'secret',
  'mistake',
  'never',
  'always',
  'best',
  'worst',
  'biggest',
  'favorite',
  'favourite',
  'love',
  'hate',
  'important',
  'critical',
  'dangerous',
  'impossible',
  'free',
  'wrong',
]);

/**
 * First words that lean on something said before: a pronoun with its noun earlier, or a conjunction
 * continuing an earlier sentence. A short opening on one is extended back or not picked.
 */
export const DEPENDENT_OPENERS = new Set([
  'so',
  'and',
  'but',
  'or',
  'because',
  'also',
  'then',
  'therefore',
  'which',
  'he',
  'she',
  'it',
  "it's",
  'they',
  "they're",
  'him',
  'her',
  'them',
  'his',
  'their',
  'its',
  'these',
  'those',
]);
/** Openers that are only a breath before the real first word ("um, so ..."). */
export const BREATH = new Set(['um', 'uh', 'er', 'ah', 'oh', 'well', 'okay', 'ok', 'yeah', 'right']);

/** What is said about the talk rather than in it: nobody posts a sound check or a sponsor read. */
export const LOGISTICS = [
  'can you see',
  'can you hear',
  'hear me',
  'see my screen',
  'share my screen',
  'my screen',
  'next slide',
  'the slide',
  'that slide',
  'let me find',
  'let me share',
  'give me a second',
  'one second',
  'hang on',
  'bear with me',
  'sound check',
  'testing testing',
  'is this on',
  'mute',
  'the chat',
  'in the comments',
  'subscribe',
  'the link',
  'in the description',
  'sponsor',
  'sponsored',
  'brought to you by',
  'promo code',
  'discount code',
  'welcome back',
  'welcome everyone',
  'hello everyone',
  'hello everybody',
  'good morning everyone',
  'thanks for having me',
  'thanks for watching',
  'thank you for watching',
  'before we start',
  'before we begin',
  'housekeeping',
  'a quick reminder',
  'we will take a break',
  "we'll take a break",
  'see you next',
  'see you soon',
  'let me check',
  'where was i',
  'there it is',
  'the clicker',
];

/** Words that close a thought: a conclusion or its payoff. */
export const PAYOFF_PHRASES = [
  "that's why",
  'that is why',
  'which means',
  'the lesson',
  'the result',
  'the answer',
  'in the end',
  'turns out',
  'it turned out',
  'so the',
  'the point is',
  'the trick',
  'the key',
  'and that',
  'finally',
  'now you know',
  'remember',
];

/** A light stem so that "pricing" finds "price" and "stories" finds "story". */
export function stem(word: string): string {
  const w = bareWord(word).replace(/'s$/, '');
  if (w.length > 5 && w.endsWith('ies')) return w.slice(0, -3) + 'y';
  if (w.length > 5 && w.endsWith('ing')) return w.slice(0, -3).replace(/e$/, '');
  if (w.length > 4 && w.endsWith('ed')) return w.slice(0, -2).replace(/e$/, '');
  if (w.length > 4 && w.endsWith('es')) return w.slice(0, -2).replace(/e$/, '');
  if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) return w.slice(0, -1).replace(/e$/, '');
  return w.replace(/e$/, '');
}

/** A sentence's words as ` bare words joined by spaces `, for phrase lookups on whole words. */
export function phraseText(words: readonly Word[]): string {
  return ' ' + words.map((w) => bareWord(w.text)).join(' ') + ' ';
}

/** Talk about the talk, or too short to say anything (one or two words). */

export const isLogistics = (text: string) => LOGISTICS.some((p) => text.includes(' ' + p + ' ')) || text.trim().split(' ').length <= 2;

/** How many times each topic is mentioned (every word of a phrase, stemmed, within 4 words). */
export function topicMentions(words: readonly Word[], topics: readonly string[]): Map<string, number> {
  // A recogniser may split a compound ("start up" for "startup"): each word joined with the next counts too.
  const stems = words.map((w) => stem(w.text));
  const joined = words.map((w, i) => (i + 1 < words.length ? stem(bareWord(w.text) + bareWord(words[i + 1]!.text)) : ''));
  const found = new Map<string, number>();
  for (const topic of topics) {
    const parts = topic
      .split(/\s+/)
      .map(stem)
      .filter((p) => p.length > 0);
    if (!parts.length) continue;
    let count = 0;
    for (let i = 0; i < stems.length; i++) {
      if (parts.length === 1 && joined[i] === parts[0]) {
        count++;
        continue;
      }
      if (stems[i] !== parts[0]) continue;
      const near = stems.slice(i, i + parts.length + 3);
      // The very word counts whole; another word of the same stem ("write" for "writing") half.
      const exact = bareWord(words[i]!.text) === topic.split(/\s+/)[0];
      if (parts.every((p) => near.includes(p))) count += exact ? 1 : 0.5;
    }
    if (count) found.set(topic, count);
  }
  return found;
}
