import test, { type ExecutionContext } from 'ava';
import type { Transcript } from '@shorts/common/text/transcript';
import { timedTranscript } from './helpers/timed-transcript.js';
import { segmentSentences } from '../node-agent/src/highlights/segments.js';
import { selectShorts, speechOnset } from '../node-agent/src/highlights/selector.js';
import { stem } from '../node-agent/src/highlights/score.js';
import type { Short } from '../node-agent/src/highlights/types.js';

// Issue 40 at the picker: whole thoughts, the client's lengths, count, range and topics, and a
// score with its parts and a one-sentence reason. Transcripts are built with known word times.

/** Sentences at 2.8 words/s, 0.5 s apart unless a part says otherwise. */
const buildTranscript = (parts: Array<{ text: string; pauseAfter?: number }>, opts: { punctuated?: boolean } = {}): Transcript =>
  timedTranscript(parts, { ...opts, pauseSec: 0.5 });

const LOGISTICS = [
  'Hello everyone, can you hear me okay?',
  'Let me share my screen, give me a second.',
  'Can you see my screen now?',
  'Okay, before we start, a quick reminder about the chat.',
];
const GARDEN = [
  'Here is the secret of a green garden.',
  'Water the garden early in the morning, before the sun is up.',
  'The plants drink before the heat arrives and nothing is wasted.',
  'That is why a morning garden grows twice as fast as an evening one.',
];
const COFFEE = [
  'Why do we drink so much coffee?',
  'Coffee wakes the brain up in about twenty minutes.',
  'Most people drink three cups of coffee every single day.',
  'So the best time for coffee is the middle of the morning.',
];
/** A story whose best lines open on a pronoun: "He" needs the sentence before it. */
const BAKER = [
  'My grandfather was a baker in a small town by the sea.',
  'He got up at three every morning for forty years.',
  'He said the secret of bread is patience, not flour.',
  'And he never once sold a loaf he would not eat himself.',
];

function talk(punctuated = true) {
  const parts = [
    ...LOGISTICS.map((text) => ({ text, pauseAfter: 0.7 })),
    ...GARDEN.map((text) => ({ text })),
    { text: 'Okay, next slide please.', pauseAfter: 1.2 },
    ...COFFEE.map((text) => ({ text })),
    { text: 'Sorry, the slide is not moving.', pauseAfter: 1.2 },
    ...BAKER.map((text) => ({ text })),
    { text: 'Thanks for watching, see you next week.', pauseAfter: 1 },
  ];
  const transcript = buildTranscript(parts, { punctuated });
  const sentences = segmentSentences(transcript.words);
  const unit = (lines: string[]) => {
    const first = sentences.find((s) => s.text.replace(/[^\w ]/g, '').toLowerCase() === lines[0]!.replace(/[^\w ]/g, '').toLowerCase());
    const startId = transcript.words.findIndex((w) => w.start >= (first?.start ?? -1));
    const n = lines.join(' ').split(/\s+/).length;
    return { start: transcript.words[startId]!.start, end: transcript.words[startId + n - 1]!.end, startId, endId: startId + n - 1 };
  };
  return { transcript, garden: unit(GARDEN), coffee: unit(COFFEE), baker: unit(BAKER), logistics: unit(LOGISTICS) };
}

const length = (s: Short) => s.endTime - s.startTime;
const inside = (s: Short, u: { start: number; end: number }) => s.startTime >= u.start - 0.31 && s.endTime <= u.end + 0.31;

function checkWholeThoughts(t: ExecutionContext, transcript: Transcript, shorts: Short[]) {
  const words = transcript.words;
  const sentences = segmentSentences(words);
  for (const s of shorts) {
    t.true(
      sentences.some((x) => x.startId === s.startId),
      `short ${s.id} starts on a sentence start`,
    );
    t.true(
      sentences.some((x) => x.endId === s.endId),
      `short ${s.id} ends on a sentence end`,
    );
    const first = words[s.startId!]!;
    const last = words[s.endId!]!;
    // At most 0.3 s of lead-in and tail, and never into a neighbouring word.
    t.true(first.start - s.startTime <= 0.3 + 1e-9 && first.start - s.startTime >= 0, `lead-in ${first.start - s.startTime}`);
    t.true(s.endTime - last.end <= 0.3 + 1e-9 && s.endTime - last.end >= 0, `tail ${s.endTime - last.end}`);
    if (s.startId! > 0) t.true(s.startTime >= words[s.startId! - 1]!.end);
    if (s.endId! < words.length - 1) t.true(s.endTime <= words[s.endId! + 1]!.start);
    t.false(/^(he|she|it|they|so|and|but)$/i.test(first.text.replace(/[^\w]/g, '')), `short ${s.id} opens on "${first.text}"`);
  }
}

function checkScores(t: ExecutionContext, s: Short, topicsAsked: boolean) {
  t.true(Number.isInteger(s.score) && s.score! >= 0 && s.score! <= 100, `score ${s.score}`);
  const parts = s.scores!;
  for (const k of ['hook', 'completeness', 'standalone', 'energy'] as const) t.true(parts[k] >= 0 && parts[k] <= 100, `${k} ${parts[k]}`);
  if (topicsAsked) t.true(parts.topicMatch !== null && parts.topicMatch >= 0 && parts.topicMatch <= 100);
  else t.is(parts.topicMatch, null);
  // One sentence: a single full stop, at the end, naming the total.
  t.regex(s.reason!, /^Scores \d+\/100: [^.]*\.$/, s.reason);
  t.true(s.reason!.includes(`Scores ${s.score}/100`));
}

test('the stories win over the logistics; scores and reasons on every short', (t) => {
  const f = talk();
  const shorts = selectShorts(f.transcript, { minSec: 8, maxSec: 30, maxShorts: 3 });
  t.log(shorts.map((s) => `${s.startTime}-${s.endTime} ${s.score} ${JSON.stringify(s.scores)} ${s.reason}`).join('\n'));
  t.is(shorts.length, 3);
  checkWholeThoughts(t, f.transcript, shorts);
  for (const s of shorts) {
    checkScores(t, s, false);
    t.true(s.endTime <= f.logistics.start || s.startTime >= f.logistics.end, `short ${s.id} is not the sound check`);
  }
  // Each of the three stories is a short.
  for (const u of [f.garden, f.coffee, f.baker]) t.truthy(shorts.find((s) => s.startTime <= u.start + 0.5 && s.endTime >= u.start + 4));
});

test('a short never opens on a sentence that leans on an earlier one: it starts where the story does', (t) => {
  const f = talk();
  // Only the baker story, cut by a range; a short of 8-12 s could start on any "He ..." line.
  const shorts = selectShorts(f.transcript, {
    minSec: 8,
    maxSec: 14,
    maxShorts: 3,
    range: { start: f.baker.start - 0.1, end: f.baker.end + 0.1 },
  });
  t.true(shorts.length >= 1);
  checkWholeThoughts(t, f.transcript, shorts);
  t.is(shorts[0]!.startId, f.baker.startId, 'the short starts on "My grandfather", the antecedent of "He"');
});

test('without punctuation sentences come from pauses, and the same rules hold', (t) => {
  const f = talk(false);
  const shorts = selectShorts(f.transcript, { minSec: 8, maxSec: 30, maxShorts: 3 });
  t.true(shorts.length >= 2);
  checkWholeThoughts(t, f.transcript, shorts);
  for (const s of shorts) t.true(s.endTime <= f.logistics.start || s.startTime >= f.logistics.end);
});

test('clip length, count and range are honoured', (t) => {
  const f = talk();
  for (const [minSec, maxSec] of [
    [5, 9],
    [10, 20],
    [15, 60],
  ] as const) {
    const shorts = selectShorts(f.transcript, { minSec, maxSec, maxShorts: 20 });
    t.true(shorts.length >= 1);
    for (const s of shorts) t.true(length(s) >= minSec - 1e-9 && length(s) <= maxSec + 1e-9, `${minSec}-${maxSec}: ${length(s)}`);
    checkWholeThoughts(t, f.transcript, shorts);
  }
  t.is(selectShorts(f.transcript, { minSec: 5, maxSec: 9, maxShorts: 1 }).length, 1);
  const range = { start: f.coffee.start - 0.2, end: f.coffee.end + 0.2 };
  const ranged = selectShorts(f.transcript, { minSec: 5, maxSec: 20, maxShorts: 5, range });
  t.true(ranged.length >= 1);
  for (const s of ranged) t.true(s.startTime >= range.start && s.endTime <= range.end, `${s.startTime}-${s.endTime}`);
});

test('topics: the shorts are about what was asked, and say so', (t) => {
  const f = talk();
  const coffee = selectShorts(f.transcript, { minSec: 8, maxSec: 20, maxShorts: 2, topics: ['coffee'] });
  t.true(coffee.length >= 1);
  for (const s of coffee) {
    checkScores(t, s, true);
    t.regex(s.text, /coffee/i);
    t.true(s.scores!.topicMatch! > 0);
    t.regex(s.reason!, /"coffee"/);
  }
  // A phrase and a plural: "gardens" finds "garden", "morning garden" its two words together.
  const garden = selectShorts(f.transcript, { minSec: 8, maxSec: 20, maxShorts: 1, topics: ['gardens'] });
  t.true(inside(garden[0]!, f.garden), `${garden[0]!.startTime}-${garden[0]!.endTime}`);
  const phrase = selectShorts(f.transcript, { minSec: 8, maxSec: 20, maxShorts: 1, topics: ['morning garden'] });
  t.true(inside(phrase[0]!, f.garden));
  // A topic nobody talks about: the best shorts anyway, each scored 0 on it.
  const none = selectShorts(f.transcript, { minSec: 8, maxSec: 20, maxShorts: 2, topics: ['volcanoes'] });
  t.true(none.length >= 1);
  for (const s of none) t.is(s.scores!.topicMatch, 0);
  t.is(stem('stories'), stem('story'));
  t.is(stem('pricing'), stem('price'));
});

test('a topic the recogniser misheard counts where the audio spotted it said', (t) => {
  const f = talk(false);
  // "Coffee" heard as "coffin" everywhere: the transcript never names the topic.
  const misheard: Transcript = {
    ...f.transcript,
    words: f.transcript.words.map((w) => (w.text === 'coffee' ? { ...w, text: 'coffin' } : w)),
  };
  const blind = selectShorts(misheard, { minSec: 8, maxSec: 20, maxShorts: 1, topics: ['coffee'] });
  t.is(blind[0]!.scores!.topicMatch, 0, 'without spotting the topic is not found');
  const topicSpots = f.transcript.words.filter((w) => w.text === 'coffee').map((w) => ({ topic: 'coffee', start: w.start, end: w.end }));
  t.true(topicSpots.length >= 3);
  const [pick] = selectShorts(misheard, { minSec: 8, maxSec: 20, maxShorts: 1, topics: ['coffee'], topicSpots });
  t.true(inside(pick!, f.coffee), `${pick!.startTime}-${pick!.endTime}`);
  t.true(pick!.scores!.topicMatch! > 0);
  t.regex(pick!.reason!, /"coffee"/);
  // Spots add to the transcript's own mentions only where it missed them: the same count either way.
  const read = selectShorts(f.transcript, { minSec: 8, maxSec: 20, maxShorts: 1, topics: ['coffee'] })[0]!;
  const both = selectShorts(f.transcript, { minSec: 8, maxSec: 20, maxShorts: 1, topics: ['coffee'], topicSpots })[0]!;
  t.deepEqual(both.scores, read.scores);
});

/** Loudness as the agent's WAV scan gives it: speech-loud inside the talk's words, room tone between. */
const loudnessOf = (transcript: Transcript) => (start: number, end: number) =>
  transcript.words.some((w) => w.start < end && w.end > start) ? -20 : -65;

test('a short starts where the speech began when the recogniser dropped or delayed its first word', (t) => {
  const f = talk(false);
  const energy = loudnessOf(f.transcript);
  // The recogniser lost "here is" at the garden story's start and heard "the" 0.1 s late.
  const dropped = f.garden.startId;
  const words = f.transcript.words
    .filter((_, i) => i !== dropped && i !== dropped + 1)
    .map((w) => (w.start === f.transcript.words[dropped + 2]!.start ? { ...w, start: w.start + 0.1 } : w));
  const heard: Transcript = { ...f.transcript, words };
  const range = { start: f.garden.start - 2, end: f.garden.end + 0.5 };
  const [deaf] = selectShorts(heard, { minSec: 8, maxSec: 20, maxShorts: 1, range });
  t.true(deaf!.startTime > f.garden.start + 0.5, `without loudness the short starts at the first heard word: ${deaf!.startTime}`);
  const [short] = selectShorts(heard, { minSec: 8, maxSec: 20, maxShorts: 1, range, energy });
  const prevEnd = f.transcript.words[dropped - 1]!.end;
  t.true(short!.startTime <= f.garden.start, `starts before "Here": ${short!.startTime} vs ${f.garden.start}`);
  t.true(short!.startTime >= f.garden.start - 0.3, `at most 0.3 s of lead-in: ${short!.startTime}`);
  t.true(short!.startTime > prevEnd, 'never into the sentence before');
});

test('speech onset: back through speech to the pause, never more than 1 s, never into the previous word', (t) => {
  const speechFrom = (onset: number) => (start: number, end: number) => (end > onset + 1e-9 && start < 50 ? -20 : -65);
  // Speech began 0.4 s before the first recognised word.
  t.true(Math.abs(speechOnset(10, 8, speechFrom(9.6), -20) - 9.6) < 0.021);
  // Speech already under way 1 s back: no onset is found, the word's own start stays.
  t.is(speechOnset(10, 5, speechFrom(7), -20), 10);
  // Loud right up to the previous word's end: a word the recogniser dropped between them; the cut
  // goes where the previous word ended, not into it.
  t.true(Math.abs(speechOnset(10, 9.7, speechFrom(0), -20) - 9.7) < 0.021);
  // Short quiet (a stop consonant) is bridged; the pause before it is found.
  const withStop = (start: number, end: number) => (end <= 9.3 || (start >= 9.7 && end <= 9.8) ? -65 : -20);
  t.true(Math.abs(speechOnset(10, 8, withStop, -20) - 9.3) < 0.021);
  // Quiet before the word: it is the onset.
  t.is(speechOnset(10, 8, speechFrom(10), -20), 10);
});
