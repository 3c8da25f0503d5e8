// Picking shorts worth posting, measured (issue 40). Talks are composed with flite from scripted
// units: stories with a hook and a payoff, answers to a question, lists (the good units, labelled),
// and filler (greetings, logistics, sponsor reads, "um, let me find that slide"), in a random order
// and number per seed. Each talk is heard by pocketsphinx (or, with --words reference, read from
// flite's own word times without punctuation, to measure the picker alone) and picked with the
// local picker; the picks are scored against the labels.
//
//   npm run bench:selection -- [--split dev|heldout] [--talks N] [--minutes M|A-B] [--words asr|reference]
//                                [--units standard|titles] [--cache DIR] [--no-spotting] [--no-loudness]
//                                [--spot-threshold X] [--verbose]
//
// `--units titles` adds good units whose strongest sentence is not their first, for the titles.
// `--minutes 10-40` draws each talk's length from that range (by its seed).
// As the agent does, the picker gets the talk's loudness (energy, and where speech began before a
// short's first recognised word) and, with pocketsphinx, where each asked topic is spotted in the
// audio; `--no-loudness` and `--no-spotting` take them away. `--cache DIR` keeps each talk and its
// transcript there, so that a second run (another threshold, another rule) skips flite and the
// recogniser.
//
// Seeds: dev 1..N, held-out 1001..1000+N. Tune on dev; report held-out.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { stem } from '@shorts/common/text/cues';
import { bareWord } from '@shorts/common/text/sentences';
import { joinWords, type Transcript, type Word } from '@shorts/common/text/transcript';
import { selectShorts } from '../node-agent/src/highlights/selector.js';
import type { Short } from '../node-agent/src/highlights/types.js';
import { createTranscriber, transcriberConfigFromEnv } from '../node-agent/src/transcribe/transcriber.js';
import { SPOT_THRESHOLD, spotTopics, type TopicSpot } from '../node-agent/src/transcribe/keyword-spotting.js';
import { scanWav } from '../node-agent/src/media/audio-levels.js';
import { synthesiseTalk, type RefWord } from '../test/transcribe-synth.js';

interface Unit {
  kind: 'story' | 'answer' | 'list' | 'filler';
  /** The word a client would name as a topic for it (good units only). */
  subject?: string;
  sentences: string[];
  /** Good units: the sentence that hooks (index into `sentences`), and the one that pays off or
   *  answers, if any: the sentences a person would title the unit with. */
  hook?: number;
  payoff?: number;
}

const GOOD: Unit[] = [
  {
    kind: 'story',
    subject: 'bread',
    hook: 0,
    payoff: 3,
    sentences: [
      'Here is the secret my grandfather taught me about bread.',
      'He baked every morning for forty years in a tiny shop.',
      'He said good bread needs time, not more yeast.',
      'That is why his dough rested for a whole night.',
    ],
  },
  {
    kind: 'story',
    subject: 'marathon',
    hook: 0,
    payoff: 3,
    sentences: [
      'Nobody expected me to finish my first marathon.',
      'At mile twenty my legs stopped working completely.',
      'A stranger handed me an orange and walked with me for a mile.',
      'I finished in five hours, and the lesson was simple: accept help.',
    ],
  },
  {
    kind: 'story',
    subject: 'garden',
    hook: 0,
    payoff: 3,
    sentences: [
      'The biggest mistake I made with my garden was watering at night.',
      'The leaves stayed wet until morning and the plants got sick.',
      'Now I water early, before the sun comes up.',
      'Turns out the garden grows twice as fast that way.',
    ],
  },
  {
    kind: 'story',
    subject: 'startup',
    hook: 0,
    payoff: 3,
    sentences: [
      'Let me tell you how our startup almost died in one week.',
      'Our only server crashed on the day of the launch.',
      'We moved everything to a laptop in the office kitchen.',
      'In the end we kept every customer, and we bought a second server.',
    ],
  },
  {
    kind: 'answer',
    subject: 'sleep',
    hook: 0,
    payoff: 1,
    sentences: [
      'Why do we forget our dreams so quickly?',
      'The answer is that the memory system is mostly switched off during sleep.',
      'Dreams never get written down properly.',
      'So if you want to remember one, write it down the moment you wake up.',
    ],
  },
  {
    kind: 'answer',
    subject: 'coffee',
    hook: 0,
    payoff: 3,
    sentences: [
      'What is the best time to drink coffee?',
      'Most people drink it the moment they wake up.',
      'But your body already makes its own wake up signal in the first hour.',
      'The best time for coffee is about two hours after you get up.',
    ],
  },
  {
    kind: 'answer',
    subject: 'saving',
    hook: 0,
    payoff: 1,
    sentences: [
      'How do you start saving money when you earn very little?',
      'You start with one percent of every payment.',
      'One percent is small enough that you never notice it.',
      'After a year the habit matters more than the amount.',
    ],
  },
  {
    kind: 'list',
    subject: 'interview',
    hook: 0,
    sentences: [
      'Three things will make your next job interview easier.',
      'First, research the company for twenty minutes, not two hours.',
      'Second, prepare one story about a failure and what you learned.',
      'Third, ask them a real question at the end.',
    ],
  },
  {
    kind: 'list',
    subject: 'writing',
    hook: 0,
    sentences: [
      'Here are four rules for clear writing.',
      'Use short words.',
      'Put the main point in the first sentence.',
      'Cut every sentence that does not earn its place, and read it out loud once.',
    ],
  },
];

/**
 * Good units whose strongest sentence is not their first (`--units titles` adds them to the pool):
 * the talks of the standard pool open every unit on its hook, so only these tell a title made from
 * the strongest sentence from one made from the first words.
 */
const SLOW_OPENERS: Unit[] = [
  {
    kind: 'story',
    subject: 'bike',
    hook: 2,
    payoff: 3,
    sentences: [
      'I bought an old bike from a neighbour last spring.',
      'The chain was rusty and one tyre was flat.',
      'Nobody believed it would ever ride again.',
      'Three weeks and forty dollars later, it was the fastest bike on our street.',
    ],
  },
  {
    kind: 'answer',
    subject: 'plants',
    hook: 1,
    payoff: 3,
    sentences: [
      'My sister keeps asking me about her house plants.',
      'Why do house plants die in winter?',
      'Most of them are not cold, they are drowning.',
      'That is why you should water them half as often when the days get short.',
    ],
  },
  {
    kind: 'list',
    subject: 'email',
    hook: 1,
    sentences: [
      'I get a lot of email at work.',
      'Here are three rules that cut my inbox in half.',
      'Answer anything that takes two minutes right away.',
      'Unsubscribe from one list every day, and keep the inbox closed.',
    ],
  },
];

const FILLER: Unit[] = [
  { kind: 'filler', sentences: ['Hello everyone, can you hear me okay?', 'Let me know in the chat if the sound is working.'] },
  { kind: 'filler', sentences: ['Um, let me find that slide.', 'One second, the clicker is not working.', 'Okay, there it is.'] },
  { kind: 'filler', sentences: ['Can you see my screen now?', 'I will share the other window, hang on.'] },
  {
    kind: 'filler',
    sentences: ['This part of the video is brought to you by our sponsor.', 'Use the promo code in the description for ten percent off.'],
  },
  { kind: 'filler', sentences: ['Before we start, a quick reminder about housekeeping.', 'We will take a break at the top of the hour.'] },
  { kind: 'filler', sentences: ['Okay, next slide please.', 'Sorry, the slide is not moving, give me a second.'] },
  { kind: 'filler', sentences: ['Thanks for having me, it is great to be here.', 'Good morning everyone, welcome back.'] },
  { kind: 'filler', sentences: ['Uh, where was I.', 'Right, okay.', 'Let me check the time.'] },
  { kind: 'filler', sentences: ['Thanks for watching, and see you next week.', 'Do not forget to subscribe.'] },
];

/** Seeded, so that a seed is the same talk on every run. */
function rng(seed: number) {
  let x = (seed * 2654435761) >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return ((x >>> 0) % 1_000_000) / 1_000_000;
  };
}
const shuffle = <T>(xs: T[], r: () => number) =>
  xs
    .map((x) => [r(), x] as const)
    .sort((a, b) => a[0] - b[0])
    .map(([, x]) => x);

interface Labelled {
  unit: Unit;
  /** Reference times of the unit's first and last word; each sentence's first word start. */
  start: number;
  end: number;
  sentenceStarts: number[];
}

/** Flite's voice speaks about 2.9 words a second; each sentence is followed by 0.55 s of pause on
 *  average, and each unit's last by 0.75 s more. */
const spokenSec = (u: Unit) => u.sentences.reduce((sum, text) => sum + text.split(/\s+/).length / 2.9 + 0.55, 0.75);

/** A talk of about `minutes`: good units (each at most once) and filler at random, until it is that long. */
async function composeTalk(seed: number, minutes: number, dir: string, pool: readonly Unit[]) {
  const r = rng(seed);
  const good = shuffle([...pool], r);
  const filler = shuffle([...FILLER, ...FILLER], r);
  const units: Unit[] = [];
  for (let sec = 0, g = 0, f = 0; units.length < 3 || sec < minutes * 60; sec += spokenSec(units.at(-1)!)) {
    const wantGood = r() < 0.5 && g < good.length;
    if (wantGood) units.push(good[g++]!);
    else units.push(filler[f++ % filler.length]!);
  }
  const phrases = units.flatMap((u, ui) =>
    u.sentences.map((text, si) => ({ text, pauseAfter: si === u.sentences.length - 1 ? 0.9 + r() * 0.8 : 0.35 + r() * 0.4, ui })),
  );
  const talk = await synthesiseTalk(dir, phrases);
  // Reference words back to their units and sentences.
  const bare = (w: string) => w.toLowerCase().replace(/[^a-z']/g, '');
  const labelled: Labelled[] = [];
  let k = 0;
  const sentenceStartTimes: number[] = [];
  for (const u of units) {
    const starts: number[] = [];
    let first = -1;
    for (const s of u.sentences) {
      const n = s.split(/\s+/).filter((w) => bare(w)).length;
      starts.push(talk.words[k]!.start);
      if (first < 0) first = k;
      k += n;
    }
    sentenceStartTimes.push(...starts);
    labelled.push({ unit: u, start: talk.words[first]!.start, end: talk.words[k - 1]!.end, sentenceStarts: starts });
  }
  return { talk, labelled, sentenceStartTimes };
}

/** Reference words as pocketsphinx would give them: lower case, no punctuation. */
function referenceTranscript(words: RefWord[], durationSec: number): Transcript {
  const ws: Word[] = words.map((w) => ({ text: w.text, start: w.start, end: w.end, confidence: 1 }));
  return { language: 'en', text: joinWords(ws), words: ws, durationSec, backend: 'reference' };
}

const overlap = (a: { startTime: number; endTime: number }, b: { start: number; end: number }) =>
  Math.max(0, Math.min(a.endTime, b.end) - Math.max(a.startTime, b.start));
const median = (xs: number[]) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

interface Tally {
  pickedSec: number;
  goodSec: number;
  goodUnits: number;
  recalled: number;
  boundary: number[];
  shorts: number;
  /** The first recognised word is not a sentence's first (within 0.3 s): the recogniser's view. */
  midSentence: number;
  /** The first word heard after the cut is not a sentence's first: the viewer's view. */
  midSentenceCut: number;
  midWord: number;
  topicAsked: number;
  topicHit: number;
  /** Of the topic hits, those whose title names the topic. */
  topicInTitle: number;
  pickMs: number;
  /** The loudness scan and the keyword spotting, which the agent runs before picking. */
  spotMs: number;
  sourceSec: number;
  /** Shorts lying mostly in a good unit, and of those: titled from its labelled hook or payoff,
   *  titled from the short's own first sentence, and whose first sentence is a labelled one (what a
   *  title from the first words would score). */
  titled: number;
  titleLabelled: number;
  titleFirst: number;
  firstLabelled: number;
  longestTitle: number;
}

/** Where the title's words start in the short (its first three words found in order), if found. */
function titleStart(s: Short, transcript: Transcript): number | undefined {
  const key = s.title.replace(/…$/, '').split(/\s+/).map(bareWord).filter(Boolean).slice(0, 3);
  const ws = transcript.words.slice(s.startId!, s.endId! + 1);
  for (let i = 0; key.length && i + key.length <= ws.length; i++) {
    if (key.every((k, j) => bareWord(ws[i + j]!.text) === k)) return ws[i]!.start;
  }
  return undefined;
}

/** The unit's sentence (index) a time falls in, 0.3 s tolerance for the recogniser's clock; -1 outside. */
const sentenceAt = (l: Labelled, t: number | undefined) =>
  t === undefined || t < l.start - 0.3 || t > l.end + 0.3 ? -1 : Math.max(0, l.sentenceStarts.filter((x) => x <= t + 0.3).length - 1);
const isTitleSentence = (l: Labelled, i: number) => i >= 0 && (i === l.unit.hook || i === l.unit.payoff);

function measure(
  tally: Tally,
  shorts: Short[],
  labelled: Labelled[],
  refWords: RefWord[],
  sentenceStarts: number[],
  transcript: Transcript,
) {
  const good = labelled.filter((l) => l.unit.kind !== 'filler');
  for (const s of shorts) {
    tally.shorts++;
    tally.pickedSec += s.endTime - s.startTime;
    tally.goodSec += good.reduce((sum, l) => sum + overlap(s, l), 0);
    // Where the short's speech starts and ends: its first and last recognised word.
    const first = transcript.words[s.startId!]!;
    const last = transcript.words[s.endId!]!;
    if (refWords.some((w) => s.startTime > w.start + 0.05 && s.startTime < w.end - 0.05)) tally.midWord++;
    if (!sentenceStarts.some((t) => Math.abs(t - first.start) <= 0.3)) tally.midSentence++;
    // A word counts as heard when more than 50 ms of it is after the cut.
    const heard = refWords.find((w) => w.end > s.startTime + 0.05);
    if (heard && !sentenceStarts.includes(heard.start)) tally.midSentenceCut++;
    const home = good.find((l) => overlap(s, l) >= 0.5 * (s.endTime - s.startTime));
    if (home) tally.boundary.push(Math.abs(first.start - home.start), Math.abs(last.end - home.end));
    tally.longestTitle = Math.max(tally.longestTitle, s.title.length);
    if (!home) continue;
    const titleAt = sentenceAt(home, titleStart(s, transcript));
    const firstAt = sentenceAt(home, first.start);
    tally.titled++;
    if (isTitleSentence(home, titleAt)) tally.titleLabelled++;
    if (titleAt === firstAt) tally.titleFirst++;
    if (isTitleSentence(home, firstAt)) tally.firstLabelled++;
  }
  for (const l of good) {
    tally.goodUnits++;
    if (shorts.some((s) => overlap(s, l) >= 0.5 * (l.end - l.start))) tally.recalled++;
  }
}

interface BenchArgs {
  split: 'dev' | 'heldout';
  talks: number;
  /** Each talk's length is drawn from this range by its seed (one number: every talk that long). */
  minutes: { min: number; max: number };
  source: 'asr' | 'reference';
  units: 'standard' | 'titles';
  cache?: string;
  spotting: boolean;
  loudness: boolean;
  spotThreshold: number;
  verbose: boolean;
}

function parseArgs(args: string[]): BenchArgs {
  const opt = (name: string, fallback: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 && args[i + 1] ? args[i + 1]! : fallback;
  };
  const split = opt('split', 'dev');
  if (split !== 'dev' && split !== 'heldout') throw new Error('--split is dev or heldout');
  const units = opt('units', 'standard');
  if (units !== 'standard' && units !== 'titles') throw new Error('--units is standard or titles');
  const source = opt('words', 'asr');
  if (source !== 'asr' && source !== 'reference') throw new Error('--words is asr or reference');
  const cache = opt('cache', '');
  return {
    split,
    talks: Number(opt('talks', '3')),
    minutes: minutesRange(opt('minutes', '3')),
    source,
    units,
    ...(cache ? { cache: path.resolve(cache) } : {}),
    spotting: !args.includes('--no-spotting'),
    loudness: !args.includes('--no-loudness'),
    spotThreshold: Number(opt('spot-threshold', String(SPOT_THRESHOLD))),
    verbose: args.includes('--verbose'),
  };
}

function minutesRange(text: string): { min: number; max: number } {
  const [min, max = min] = text.split('-').map(Number);
  if (!(min! > 0 && max >= min!)) throw new Error('--minutes is a number or a range such as 10-40');
  return { min: min!, max };
}

/** A seed's talk length, drawn from the range by the seed (a stream of its own, so the talk's order is unchanged). */
const talkMinutes = (seed: number, range: BenchArgs['minutes']) =>
  range.min === range.max ? range.min : Math.round((range.min + (range.max - range.min) * rng(seed + 7919)()) * 10) / 10;

type Talk = Awaited<ReturnType<typeof composeTalk>>;

/** A seed's talk and what the recogniser heard of it, from the cache when it holds them. */
async function heardTalk(seed: number, a: BenchArgs, tmp: string): Promise<{ talk: Talk; transcript: Transcript }> {
  const minutes = talkMinutes(seed, a.minutes);
  const dir = a.cache ? path.join(a.cache, `${a.units}-${minutes}m-seed${seed}`) : await mkdtemp(path.join(tmp, `seed${seed}-`));
  const saved = path.join(dir, `talk-${a.source}.json`);
  if (a.cache) {
    const cached = await readFile(saved, 'utf8').catch(() => undefined);
    if (cached) return JSON.parse(cached) as { talk: Talk; transcript: Transcript };
    await mkdir(dir, { recursive: true });
  }
  const pool = a.units === 'titles' ? [...GOOD, ...SLOW_OPENERS] : GOOD;
  const talk = await composeTalk(seed, minutes, dir, pool);
  const transcript =
    a.source === 'reference'
      ? referenceTranscript(talk.talk.words, talk.talk.durationSec)
      : await createTranscriber(transcriberConfigFromEnv(process.env, { workDir: dir })).transcribe(talk.talk.wavPath);
  if (a.cache) await writeFile(saved, JSON.stringify({ talk, transcript }));
  return { talk, transcript };
}

/** What the agent adds to the transcript for picking: the talk's loudness and the spotted topics. */
async function pickingAids(wavPath: string, transcript: Transcript, topics: string[], a: BenchArgs, dir: string) {
  const energy = a.loudness ? (await scanWav(wavPath)).loudness : undefined;
  let topicSpots: TopicSpot[] | undefined;
  if (a.spotting && a.source === 'asr' && transcript.backend === 'pocketsphinx') {
    const env = transcriberConfigFromEnv(process.env);
    topicSpots = await spotTopics(wavPath, topics, {
      bin: env.pocketsphinxBin,
      modelDir: env.pocketsphinxModelDir,
      workDir: dir,
      threshold: a.spotThreshold,
    });
  }
  return { energy, topicSpots };
}

function newTally(): Tally {
  return {
    pickedSec: 0,
    goodSec: 0,
    goodUnits: 0,
    recalled: 0,
    boundary: [],
    shorts: 0,
    midSentence: 0,
    midSentenceCut: 0,
    midWord: 0,
    topicAsked: 0,
    topicHit: 0,
    topicInTitle: 0,
    pickMs: 0,
    spotMs: 0,
    sourceSec: 0,
    titled: 0,
    titleLabelled: 0,
    titleFirst: 0,
    firstLabelled: 0,
    longestTitle: 0,
  };
}

/** One talk: every good moment picked, then each good unit's subject asked alone as a topic. */
async function benchTalk(tally: Tally, seed: number, a: BenchArgs, tmp: string) {
  const { talk: composed, transcript } = await heardTalk(seed, a, tmp);
  const { talk, labelled, sentenceStartTimes } = composed;
  const good = labelled.filter((l) => l.unit.kind !== 'filler');
  const subjects = good.map((l) => l.unit.subject!);
  const spotStarted = performance.now();
  const { energy, topicSpots } = await pickingAids(talk.wavPath, transcript, subjects, a, tmp);
  tally.spotMs += performance.now() - spotStarted;
  // A client who wants every good moment: as many shorts as there are, 8-60 s each.
  const started = performance.now();
  const shorts = selectShorts(transcript, { minSec: 8, maxSec: 60, maxShorts: Math.max(1, good.length), energy });
  tally.pickMs += performance.now() - started;
  tally.sourceSec += talk.durationSec;
  measure(tally, shorts, labelled, talk.words, sentenceStartTimes, transcript);
  if (a.verbose)
    for (const s of shorts) {
      const inGood = good.reduce((sum, l) => sum + overlap(s, l), 0) / (s.endTime - s.startTime);
      console.log(
        `  ${s.startTime.toFixed(1)}-${s.endTime.toFixed(1)} ${Math.round(inGood * 100)} % good, score ${s.score}, "${s.title}": ${s.text}`,
      );
    }
  // Topics: each good unit's subject asked alone, one short; a hit when it is that unit's.
  for (const l of good) {
    const topic = l.unit.subject!;
    const spots = topicSpots?.filter((x) => x.topic === topic);
    const [pick] = selectShorts(transcript, { minSec: 8, maxSec: 60, maxShorts: 1, topics: [topic], energy, topicSpots: spots });
    tally.topicAsked++;
    if (pick && overlap(pick, l) >= 0.5 * (pick.endTime - pick.startTime)) {
      tally.topicHit++;
      if (pick.title.split(/\s+/).some((w) => stem(w) === stem(topic))) tally.topicInTitle++;
      else if (a.verbose) console.log(`  topic "${topic}" not in the title "${pick.title}"`);
    } else if (a.verbose) console.log(`  topic "${topic}" missed (${spots?.length ?? 0} spots): ${pick?.text}`);
  }
  console.log(
    `seed ${seed}: ${talk.durationSec.toFixed(0)} s, ${labelled.length} units (${good.length} good), ${transcript.words.length} words, ${shorts.length} shorts`,
  );
}

function report(tally: Tally, a: BenchArgs, seeds: number[]) {
  const pct = (x: number, y: number) => (y ? `${((100 * x) / y).toFixed(1)} %` : 'n/a');
  const aids = [a.loudness ? 'loudness' : 'no loudness', a.spotting ? `spotting at ${a.spotThreshold.toExponential()}` : 'no spotting'];
  console.log(
    `\nselection, ${a.split} seeds ${seeds[0]}-${seeds.at(-1)}, ${a.source} words, ${a.units} units, ${a.minutes.min === a.minutes.max ? a.minutes.min : `${a.minutes.min}-${a.minutes.max}`}-minute talks, ${aids.join(', ')} (load ${os.loadavg()[0]!.toFixed(1)})`,
  );
  console.log(`precision (picked time inside good units): ${pct(tally.goodSec, tally.pickedSec)}`);
  console.log(`recall (good units half covered):         ${pct(tally.recalled, tally.goodUnits)} (${tally.recalled}/${tally.goodUnits})`);
  console.log(`median boundary error:                    ${median(tally.boundary).toFixed(2)} s (${tally.boundary.length} edges)`);
  console.log(`shorts starting mid-word:                 ${tally.midWord} of ${tally.shorts}`);
  console.log(
    `shorts starting mid-sentence, by the cut: ${pct(tally.midSentenceCut, tally.shorts)} (${tally.midSentenceCut}/${tally.shorts})`,
  );
  console.log(`  by the first recognised word:           ${pct(tally.midSentence, tally.shorts)} (${tally.midSentence}/${tally.shorts})`);
  console.log(`topic hit rate:                           ${pct(tally.topicHit, tally.topicAsked)} (${tally.topicHit}/${tally.topicAsked})`);
  console.log(
    `titles from the labelled hook or payoff: ${pct(tally.titleLabelled, tally.titled)} (${tally.titleLabelled}/${tally.titled} shorts in good units; from the short's first sentence ${pct(tally.titleFirst, tally.titled)}; a first-sentence title would hit ${pct(tally.firstLabelled, tally.titled)})`,
  );
  console.log(
    `topic named in the title of a topic hit:  ${pct(tally.topicInTitle, tally.topicHit)} (${tally.topicInTitle}/${tally.topicHit})`,
  );
  console.log(`longest title:                            ${tally.longestTitle} characters`);
  console.log(`picking stage:                            ${((tally.pickMs / tally.sourceSec) * 60).toFixed(1)} ms per minute of source`);
  console.log(`loudness scan and topic spotting:         ${((tally.spotMs / tally.sourceSec) * 60).toFixed(0)} ms per minute of source`);
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const seeds = Array.from({ length: a.talks }, (_, i) => (a.split === 'dev' ? 1 : 1001) + i);
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'bench-selection-'));
  const tally = newTally();
  try {
    for (const seed of seeds) await benchTalk(tally, seed, a, tmp);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  report(tally, a, seeds);
}

await main();
