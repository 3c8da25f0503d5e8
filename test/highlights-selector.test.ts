import test, { type ExecutionContext } from 'ava';
import { joinWords, type Transcript } from '@shorts/common/text/transcript';
import { timedTranscript } from './helpers/timed-transcript.js';
import { predefinedShorts } from '../node-agent/src/highlights/predefined.js';
import { segmentSentences } from '../node-agent/src/highlights/segments.js';
import { defaultShortCount, makeTitle, selectShorts } from '../node-agent/src/highlights/selector.js';
import { fitTitle, titleSentence } from '@shorts/common/text/title';
import type { Short } from '../node-agent/src/highlights/types.js';

/** Sentences at 2.8 words/s, 0.4 s apart unless a part says otherwise. */
const buildTranscript = (parts: Array<{ text: string; pauseAfter?: number }>, opts: { punctuated?: boolean } = {}): Transcript =>
  timedTranscript(parts, { ...opts, pauseSec: 0.4 });

const BLAND = [
  'Hello everybody and welcome back to the channel.',
  'Today I am sitting in my kitchen with a cup of tea.',
  'The weather outside is grey and it has been raining all week.',
  'I moved the camera a little so the light looks better.',
  'Let me know in the comments if the sound is okay for you.',
  'My cat walked past the desk a minute ago.',
  'Anyway there is a lot to get through in this video.',
  'I changed the microphone settings after the last upload.',
];
const QA = [
  'Why do most people fail at saving money?',
  'The answer is simpler than you think.',
  'They never write down what they spend each week.',
  'When you track every purchase you see the leaks right away.',
  'Coffee, subscriptions and delivery fees add up faster than rent.',
  'So start tracking today and you will see the difference in a month.',
];
const NUMBERS = [
  'In 2019 we had 3 stores and 12 employees.',
  'By 2023 we had 45 stores and 1200 employees.',
  'Revenue grew 300 percent in four years.',
  'Our margin went from 8 percent to 21 percent.',
  'And we did it with 2 million dollars of funding.',
];
const OUTRO = [
  'That is more or less everything I wanted to cover.',
  'I will upload the next part on Sunday afternoon.',
  'Thanks for watching and see you soon.',
];

/** ~4.5 minutes: chatter, Q&A, chatter, 40 s of silence, numbers, chatter, outro. */
function fixture(punctuated = true) {
  const parts = [
    ...BLAND.slice(0, 5).map((text) => ({ text })),
    ...QA.map((text) => ({ text, pauseAfter: 0.5 })),
    ...BLAND.slice(5).map((text) => ({ text })),
    { text: 'Give me a second.', pauseAfter: 40 },
    ...NUMBERS.map((text) => ({ text, pauseAfter: 0.5 })),
    ...BLAND.slice(0, 4).map((text) => ({ text })),
    ...OUTRO.map((text) => ({ text })),
  ];
  const transcript = buildTranscript(parts, { punctuated });
  const find = (phrase: string) => {
    const first = phrase
      .toLowerCase()
      .replace(/[^\p{L}\p{N}' ]/gu, '')
      .split(' ')[0]!;
    const idx = transcript.words.findIndex(
      (w, i) =>
        w.text.toLowerCase().replace(/[^\p{L}\p{N}']/gu, '') === first &&
        joinWords(transcript.words.slice(i, i + phrase.split(' ').length))
          .toLowerCase()
          .replace(/[^\p{L}\p{N}' ]/gu, '') === phrase.toLowerCase().replace(/[^\p{L}\p{N}' ]/gu, ''),
    );
    if (idx < 0) throw new Error(`phrase not found: ${phrase}`);
    return idx;
  };
  const qaStart = transcript.words[find(QA[0]!)]!.start;
  const qaEnd = transcript.words[find(QA.at(-1)!) + QA.at(-1)!.split(' ').length - 1]!.end;
  const numStart = transcript.words[find(NUMBERS[0]!)]!.start;
  const numEnd = transcript.words[find(NUMBERS.at(-1)!) + NUMBERS.at(-1)!.split(' ').length - 1]!.end;
  const silenceIdx = find('Give me a second.') + 3;
  const silence = { start: transcript.words[silenceIdx]!.end, end: transcript.words[silenceIdx + 1]!.start };
  return { transcript, qaStart, qaEnd, numStart, numEnd, silence };
}

function checkInvariants(t: ExecutionContext, transcript: Transcript, shorts: Short[]) {
  const words = transcript.words;
  const sentences = segmentSentences(words);
  shorts.forEach((s, i) => {
    t.is(s.id, i);
    if (i > 0) t.true(s.startTime >= shorts[i - 1]!.endTime, `short ${i} overlaps short ${i - 1}`);
    t.true(s.endTime - s.startTime <= 90, `short ${i} lasts ${s.endTime - s.startTime} s`);
    t.true(s.endTime > s.startTime);
    t.true(
      sentences.some((x) => x.startId === s.startId),
      `short ${i} starts on a sentence boundary`,
    );
    t.true(
      sentences.some((x) => x.endId === s.endId),
      `short ${i} ends on a sentence boundary`,
    );
    t.true(s.startTime <= words[s.startId!]!.start && (s.startId === 0 || s.startTime >= words[s.startId! - 1]!.end));
    t.true(s.endTime >= words[s.endId!]!.end && (s.endId === words.length - 1 || s.endTime <= words[s.endId! + 1]!.start));
    t.is(s.text, joinWords(words.slice(s.startId!, s.endId! + 1)));
    t.true(s.title.length > 0 && s.title.length <= 60, `title "${s.title}"`);
    t.true(s.reason!.length > 0);
  });
}

const covers = (s: Short, a: number, b: number) => s.startTime <= a + 0.01 && s.endTime >= b - 0.01;
const overlap = (s: Short, a: number, b: number) => Math.max(0, Math.min(s.endTime, b) - Math.max(s.startTime, a));

test('picks the Q&A and the numbers segments, never the silence, within 90 s and on boundaries', (t) => {
  const f = fixture();
  const shorts = selectShorts(f.transcript);
  t.log(
    shorts
      .map(
        (s) =>
          `#${s.id} ${s.startTime}-${s.endTime} (${(s.endTime - s.startTime).toFixed(1)} s) score ${s.score} "${s.title}" — ${s.reason}`,
      )
      .join('\n'),
  );
  t.is(shorts.length, defaultShortCount(f.transcript.durationSec));
  checkInvariants(t, f.transcript, shorts);

  const qa = shorts.find((s) => covers(s, f.qaStart, f.qaEnd));
  t.truthy(qa, 'a short holds the whole question and answer');
  t.regex(qa!.reason!, /question/);
  t.is(qa!.title, 'Why do most people fail at saving money?');

  const numbers = shorts.find((s) => covers(s, f.numStart, f.numEnd));
  t.truthy(numbers, 'a short holds the numbers segment');
  t.regex(numbers!.reason!, /number/);

  for (const s of shorts) t.true(overlap(s, f.silence.start, f.silence.end) < 1, `short ${s.id} covers the silent stretch`);
  // Even when asked for many, the silence is left out.
  const many = selectShorts(f.transcript, { maxShorts: 10 });
  t.true(many.length > shorts.length);
  checkInvariants(t, f.transcript, many);
  for (const s of many) t.true(overlap(s, f.silence.start, f.silence.end) < 1, `short ${s.id} of many covers the silent stretch`);
  // The two content segments beat the chatter.
  const ranked = [...shorts].sort((a, b) => b.score! - a.score!);
  t.true(ranked.slice(0, 2).includes(qa!) && ranked.slice(0, 2).includes(numbers!));
});

test('without punctuation (pocketsphinx) sentences come from pauses and the same segments win', (t) => {
  const f = fixture(false);
  const shorts = selectShorts(f.transcript, { maxShorts: 2 });
  t.log(shorts.map((s) => `${s.startTime}-${s.endTime} ${s.score} ${s.reason} ${s.text}`).join('\n'));
  checkInvariants(t, f.transcript, shorts);
  t.truthy(shorts.find((s) => covers(s, f.qaStart, f.qaEnd) && /question/.test(s.reason!)));
  t.truthy(shorts.find((s) => covers(s, f.numStart, f.numEnd) && /number/.test(s.reason!)));
});

test('energy from the audio lifts a louder stretch', (t) => {
  const f = fixture();
  const plain = selectShorts(f.transcript, { maxShorts: 5 });
  const outroStart = f.transcript.words.at(-1)!.end - 25;
  const loud = selectShorts(f.transcript, { maxShorts: 5, energy: (a, b) => (a >= outroStart - 20 && b > outroStart ? -8 : -26) });
  const lateScore = (xs: Short[]) => Math.max(...xs.filter((s) => s.endTime > outroStart).map((s) => s.score!), 0);
  t.true(lateScore(loud) > lateScore(plain));
  t.truthy(loud.find((s) => /energetic/.test(s.reason!)));
});

test('a short video may become one short covering all of it', (t) => {
  const transcript = buildTranscript([
    { text: 'Did you know that honey never spoils?' },
    { text: 'Archaeologists found 3000 year old honey that was still good.' },
  ]);
  const shorts = selectShorts(transcript);
  t.is(shorts.length, 1);
  t.is(shorts[0]!.startId, 0);
  t.is(shorts[0]!.endId, transcript.words.length - 1);
  t.is(shorts[0]!.title, 'Did you know that honey never spoils?');
  t.deepEqual(selectShorts({ ...transcript, words: [], text: '' }), []);
});

test('continuous speech with no pauses over 90 s still yields windows within the limit', (t) => {
  const long = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ');
  const transcript = buildTranscript([{ text: long }]);
  const shorts = selectShorts(transcript, { maxShorts: 3 });
  t.true(shorts.length >= 1);
  for (const s of shorts) t.true(s.endTime - s.startTime <= 90);
});

test('titles: fillers dropped, cut at a clause mark, at most 60 characters at a word boundary', (t) => {
  const tr = buildTranscript([{ text: 'So, the biggest mistake new runners make, according to every coach I know, is going too fast.' }]);
  t.is(makeTitle(tr.words, segmentSentences(tr.words)), 'The biggest mistake new runners make');
  const long = buildTranscript(
    [{ text: 'and honestly this particular recipe has been in my family for generations of very patient cooks' }],
    { punctuated: false },
  );
  const title = makeTitle(long.words, segmentSentences(long.words));
  t.true(title.length <= 60, title);
  t.regex(title, /^Honestly this particular recipe/);
  t.regex(title, /…$/);
  // Unpunctuated speech ends a long title before a clause word rather than with an ellipsis.
  const clause = buildTranscript([{ text: 'so i moved every plant in the garden to the sunny side because the shade was killing them' }], {
    punctuated: false,
  });
  t.is(makeTitle(clause.words, segmentSentences(clause.words)), 'I moved every plant in the garden to the sunny side');
});

/** The title the picker gives a short made of these sentences (punctuated, a pause after each). */
const titleOf = (sentences: string[], opts: { topics?: string[]; punctuated?: boolean } = {}) => {
  const tr = buildTranscript(
    sentences.map((text) => ({ text, pauseAfter: 0.8 })),
    { punctuated: opts.punctuated },
  );
  return makeTitle(tr.words, segmentSentences(tr.words), { topics: opts.topics });
};

test('titles come from the strongest sentence, not the first words', (t) => {
  // A promise beats a scene-setting opener.
  t.is(
    titleOf([
      'I was sitting at my desk on a quiet Monday.',
      'Nobody tells you that most bugs hide in old code.',
      'That was the week I learned it.',
    ]),
    'Nobody tells you that most bugs hide in old code',
  );
  // A number in a sentence that leans on an earlier one ("he") does not beat the hook it leans on.
  t.is(titleOf(['Here is the secret of good bread.', 'He baked for forty years in a tiny shop.']), 'Here is the secret of good bread');
  // A question about the talk itself is logistics: the figure wins.
  t.is(titleOf(['Can you all see my screen?', 'Our revenue doubled in one year.']), 'Our revenue doubled in one year');
  // A conclusion with a number beats a plain opening; without punctuation too.
  const garden = [
    'My garden was always a little sad.',
    'The leaves stayed wet all night long.',
    'Turns out watering at dawn makes it grow twice as fast.',
  ];
  t.is(titleOf(garden), 'Turns out watering at dawn makes it grow twice as fast');
  t.is(titleOf(garden, { punctuated: false }), 'Turns out watering at dawn makes it grow twice as fast');
  // A lone "one" is not a figure: the promise wins.
  t.is(
    titleOf(['The chain was rusty and one tyre was flat.', 'Nobody believed it would ever ride again.']),
    'Nobody believed it would ever ride again',
  );
  // Equal strength: the opening wins; and "i" is written "I".
  t.is(titleOf(['um i love this little street.', 'i love this little bridge.'], { punctuated: false }), 'I love this little street');
});

test('titles: a sentence naming a topic asked for wins', (t) => {
  const talk = ['What is the best time to drink coffee?', 'Green tea has less caffeine than you think.', 'Most people never ask.'];
  t.is(titleOf(talk), 'What is the best time to drink coffee?');
  t.is(titleOf(talk, { topics: ['tea'] }), 'Green tea has less caffeine than you think');
  // Its cues say why.
  const tr = buildTranscript(talk.map((text) => ({ text, pauseAfter: 0.8 })));
  const best = titleSentence(tr.words, segmentSentences(tr.words), { topics: ['tea'] })!;
  t.is(best.index, 1);
  t.true(best.cues.includes('topic'));
});

test('titles: never over 60 characters, never cut inside a word, an ellipsis only when cut', (t) => {
  const vocabulary = ['a', 'the', 'extraordinarily', 'cat', 'internationalisation', 'we', 'counted', 'seven', 'houses', 'of', 'it'];
  let seed = 7;
  const next = () => (seed = (seed * 16807) % 2147483647);
  for (let n = 0; n < 200; n++) {
    const sentence = Array.from({ length: 2 + (next() % 22) }, () => vocabulary[next() % vocabulary.length]!).join(' ') + '.';
    const title = titleOf([sentence]);
    const source = sentence.replace(/\.$/, '').toLowerCase();
    t.true(title.length <= 60, title);
    const kept = title.replace(/…$/, '').toLowerCase();
    // Whole words only: what is kept is the sentence up to a space (or all of it).
    t.true(source === kept || source.startsWith(kept + ' '), `${title} from ${sentence}`);
    t.is(title.endsWith('…'), source !== kept && !kept.endsWith(','), `${title} from ${sentence}`);
  }
  t.is(fitTitle('x'.repeat(40)), 'X'.repeat(1) + 'x'.repeat(39), 'a title that fits is kept whole');
});

test('predefined shorts take the words inside, ids follow start time, ids into words are null', (t) => {
  const f = fixture();
  const w = f.transcript.words;
  const shorts = predefinedShorts(f.transcript, [
    { title: 'Numbers', start: f.numStart - 0.1, end: f.numEnd + 0.1 },
    { title: 'Intro', start: 0, end: w[9]!.end + 0.05 },
  ]);
  t.deepEqual(
    shorts.map((s) => [s.id, s.title]),
    [
      [0, 'Intro'],
      [1, 'Numbers'],
    ],
  );
  t.is(shorts[0]!.text, joinWords(w.slice(0, 10)));
  t.true(shorts[1]!.text.startsWith('In 2019 we had 3 stores'));
  t.true(shorts[1]!.text.endsWith('2 million dollars of funding.'));
  for (const s of shorts) {
    t.is(s.startId, null);
    t.is(s.endId, null);
    t.is(s.reason, undefined);
  }
  // A word straddling the cut goes where most of it is heard.
  const cut = (w[3]!.start + w[3]!.end) / 2 + 0.01;
  t.false(predefinedShorts(f.transcript, [{ title: 'a', start: 0, end: cut }])[0]!.text.includes(w[4]!.text));
  t.throws(() => predefinedShorts(f.transcript, [{ title: 'bad', start: 5, end: 5 }]), { instanceOf: RangeError });
  t.throws(() => predefinedShorts(f.transcript, [{ title: 'late', start: 10_000, end: 10_010 }]), { message: /after the end/ });
  t.is(predefinedShorts(f.transcript, [{ title: 'tail', start: 10, end: 99_999 }])[0]!.endTime, f.transcript.durationSec);
});
