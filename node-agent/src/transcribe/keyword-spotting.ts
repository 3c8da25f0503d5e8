// Where the topics a client asked for are said, heard by pocketsphinx's keyword spotter rather than
// read from its transcript. The recogniser's language model often turns an uncommon subject word
// into a likelier one ("marathon" → "mirror than"), so a topic said five times can be absent from
// the transcript; the spotter listens for that phrase alone and finds it. Used only with
// pocketsphinx, whose transcripts need it (Whisper and hosted models hear topic words well).
import { open, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { readWavInfo, writeWavPcm, type WavInfo } from '../media/wav.js';
import { runPocketsphinx, pocketsphinxModelFiles, POCKETSPHINX_DEFAULTS, type PocketsphinxOptions } from './pocketsphinx.js';

export interface TopicSpot {
  /** The topic as asked (lower case). */
  topic: string;
  start: number;
  end: number;
}

/**
 * The spotter's detection threshold, per phrase. Higher finds fewer false alarms and misses more.
 * Chosen on the selection bench's development talks (8 of 3 minutes, `npm run bench:selection --
 * --cache DIR --spot-threshold X`): topic hits were 70.8 % at 1e-20 (pocketsphinx's usual example:
 * "bread" spotted inside "secret" and "about"), 93.8 % at 1, 98.5 % at 1e3, 100 % from 1e5 to 1e20,
 * and 90.8 % (as without spotting: nothing spotted) at 1e25. 1e10 sits inside that plateau, on the
 * side of finding more: a real voice matches the acoustic model less well than flite's.
 */
export const SPOT_THRESHOLD = 1e10;

export interface SpotOptions extends PocketsphinxOptions {
  signal?: AbortSignal;
  threshold?: number;
  /** Where the phrase list is written (the run's work folder). */
  workDir: string;
  /** Listen to this stretch only, seconds (the range a client asked for); spots keep the WAV's clock. */
  range?: { start: number; end: number } | null;
}

const dictionaries = new Map<string, Promise<Set<string>>>();

/** The words pocketsphinx can listen for: its pronouncing dictionary's entries, read once per file. */
function dictionaryWords(dictPath: string): Promise<Set<string>> {
  let words = dictionaries.get(dictPath);
  if (!words) {
    words = readFile(dictPath, 'utf8').then(
      (text) => new Set(text.split('\n').map((line) => line.slice(0, line.indexOf(' ')).replace(/\(\d+\)$/, ''))),
    );
    dictionaries.set(dictPath, words);
  }
  return words;
}

/** A topic as the spotter takes it: lower-case words of letters and apostrophes. */
const phraseOf = (topic: string) =>
  topic
    .toLowerCase()
    .split(/\s+/)
    .map((w) => w.replace(/[^a-z']/g, ''))
    .filter(Boolean)
    .join(' ');

/**
 * Every place a topic is said in a 16 kHz mono WAV. Topics with a word outside the pronouncing
 * dictionary cannot be listened for and are skipped (the transcript's own mentions still count).
 */
export async function spotTopics(wavPath: string, topics: readonly string[], opts: SpotOptions): Promise<TopicSpot[]> {
  const { hmm, dict } = pocketsphinxModelFiles(opts.modelDir ?? POCKETSPHINX_DEFAULTS.modelDir);
  const known = await dictionaryWords(dict);
  const byPhrase = new Map<string, string>();
  for (const topic of topics) {
    const phrase = phraseOf(topic);
    if (phrase && phrase.split(' ').every((w) => known.has(w))) byPhrase.set(phrase, topic.toLowerCase());
  }
  if (!byPhrase.size) return [];
  const info = await readWavInfo(wavPath);
  // The acoustic model is 16 kHz; other audio would be spotted as nonsense, silently.
  if (info.sampleRate !== 16_000 || info.channels !== 1 || info.bitsPerSample !== 16)
    throw new Error(
      `keyword spotting needs 16 kHz mono s16 WAV, got ${info.sampleRate} Hz, ${info.channels} ch, ${info.bitsPerSample} bit`,
    );
  const threshold = opts.threshold ?? SPOT_THRESHOLD;
  const listPath = path.join(opts.workDir, 'topics.kws');
  await writeFile(listPath, [...byPhrase.keys()].map((p) => `${p} /${threshold.toExponential()}/\n`).join(''));
  // The spotter has no seek: a range is listened to from a WAV of its own.
  const stretch = opts.range ? await cutWav(wavPath, info, opts.range, path.join(opts.workDir, 'topics-range.wav')) : undefined;
  const offset = stretch?.startSec ?? 0;
  const spots: TopicSpot[] = [];
  const args = ['-infile', stretch?.path ?? wavPath, '-kws', listPath, '-time', 'yes', '-logfn', '/dev/null', '-hmm', hmm, '-dict', dict];
  try {
    await runPocketsphinx(opts.bin ?? POCKETSPHINX_DEFAULTS.bin, args, {
      signal: opts.signal,
      onLine: (line) => {
        const spot = parseSpotLine(line, byPhrase);
        if (spot) spots.push({ ...spot, start: round3(spot.start + offset), end: round3(spot.end + offset) });
      },
    });
  } finally {
    if (stretch) await rm(stretch.path, { force: true });
  }
  return spots.sort((a, b) => a.start - b.start);
}

const round3 = (v: number) => Math.round(v * 1000) / 1000;

/** [start, end) of a mono s16 WAV into a file of its own; its first sample's time in the source. */
async function cutWav(
  wavPath: string,
  info: WavInfo,
  range: { start: number; end: number },
  dest: string,
): Promise<{ path: string; startSec: number }> {
  const total = info.dataBytes / 2;
  const from = Math.min(total, Math.max(0, Math.floor(range.start * info.sampleRate)));
  const to = Math.min(total, Math.max(from, Math.ceil(range.end * info.sampleRate)));
  const bytes = Buffer.alloc((to - from) * 2);
  const fh = await open(wavPath, 'r');
  try {
    await fh.read(bytes, 0, bytes.length, info.dataOffset + from * 2);
  } finally {
    await fh.close();
  }
  await writeWavPcm(dest, new Int16Array(bytes.buffer, bytes.byteOffset, bytes.length / 2), info.sampleRate);
  return { path: dest, startSec: from / info.sampleRate };
}

/** `phrase start end posterior` (the phrase may hold spaces); the hypothesis lines have no times. */
export function parseSpotLine(line: string, byPhrase: ReadonlyMap<string, string>): TopicSpot | undefined {
  const m = /^(.+?)\s+(\d+\.\d+)\s+(\d+\.\d+)\s+(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)$/i.exec(line.trim());
  if (!m) return undefined;
  const topic = byPhrase.get(m[1]!.trim().replace(/\s+/g, ' '));
  return topic === undefined ? undefined : { topic, start: Number(m[2]), end: Number(m[3]) };
}
