// Caption files (SRT, WebVTT, word-level JSON) from words already on a short's own clock (0 = the
// short's first kept moment). Cues are the render's caption pages (common/src/render/caption-pages.ts):
// the same words on one caption as the burned-in captions show at once, from the first word's start,
// held until the next page over a gap shorter than a pause. Pure: captions.ts reads the data.
import { buildCaptionPages, type CaptionWord } from '@shorts/common/render/caption-pages';

/** A line longer than this is broken in two (the common broadcast limit for one subtitle line). */
export const MAX_LINE_CHARS = 42;

export interface CaptionCue {
  start: number;
  end: number;
  /** The cue's words, one or two lines (joined by "\n"). */
  lines: string[];
  /** Indices into the track's words. */
  words: number[];
}

export interface CaptionTrack {
  /** Words on the short's clock, in order, times in whole milliseconds. */
  words: CaptionWord[];
  cues: CaptionCue[];
}

/** The words, cleaned as the pages clean them (so cue indices name them), and their cues. */
export function buildCaptionTrack(input: readonly CaptionWord[], maxWordsInPage: number): CaptionTrack {
  const words = input
    .map((w) => ({ text: w.text.replace(/\s+/g, ' ').trim(), start: ms(w.start), end: ms(Math.max(w.start, w.end)) }))
    .filter((w) => w.text !== '' && Number.isFinite(w.start) && Number.isFinite(w.end))
    .sort((a, b) => a.start - b.start);
  const cues: CaptionCue[] = [];
  let next = 0;
  for (const page of buildCaptionPages(words, maxWordsInPage)) {
    const indices = page.words.map((_, i) => next + i);
    next += page.words.length;
    const start = ms(page.start);
    // A page of one instant word still shows for a millisecond: SRT and WebVTT want end > start.
    const end = Math.max(ms(page.end), start + 0.001);
    cues.push({ start, end, lines: wrapWords(page.words.map((w) => w.text)).map((l) => l.join(' ')), words: indices });
  }
  return { words, cues };
}

/** The words of one cue as at most two lines: one when it fits, else broken at the word boundary
 *  that leaves the longer line shortest. */
export function wrapWords(texts: readonly string[], max = MAX_LINE_CHARS): string[][] {
  if (texts.length < 2 || texts.join(' ').length <= max) return [[...texts]];
  let best = 1;
  let bestLongest = Infinity;
  for (let k = 1; k < texts.length; k++) {
    const longest = Math.max(texts.slice(0, k).join(' ').length, texts.slice(k).join(' ').length);
    if (longest < bestLongest) {
      best = k;
      bestLongest = longest;
    }
  }
  return [texts.slice(0, best), texts.slice(best)];
}

export function toSrt(track: CaptionTrack): string {
  return track.cues.map((c, i) => `${i + 1}\n${timestamp(c.start, ',')} --> ${timestamp(c.end, ',')}\n${c.lines.join('\n')}\n`).join('\n');
}

/** WebVTT with each word's start as a cue timestamp (`<00:00:01.234>`) where it falls strictly
 *  inside its cue, as the format requires (the first word starts with the cue). */
export function toVtt(track: CaptionTrack): string {
  const blocks = track.cues.map((c, i) => {
    let previous = c.start;
    let k = 0;
    const lines = wrapWords(c.words.map((w) => track.words[w]!.text)).map((line) =>
      line
        .map((text) => {
          const word = track.words[c.words[k++]!]!;
          const tagged = word.start > previous && word.start < c.end;
          if (tagged) previous = word.start;
          return `${tagged ? `<${timestamp(word.start, '.')}>` : ''}${escapeVtt(text)}`;
        })
        .join(' '),
    );
    return `${i + 1}\n${timestamp(c.start, '.')} --> ${timestamp(c.end, '.')}\n${lines.join('\n')}\n`;
  });
  return ['WEBVTT\n', ...blocks].join('\n');
}

/** What the JSON file holds besides the words and cues (captions.ts documents each field). */
export interface CaptionJsonMeta {
  jobId: string;
  shortId: number;
  renderId?: string;
  startTime: number;
  endTime: number;
  durationSec: number;
  maxWordsInPage: number;
  jumpCuts: Array<{ start: number; end: number; reason: string }>;
}

export function toJson(track: CaptionTrack, meta: CaptionJsonMeta) {
  return {
    ...meta,
    clock: 'short' as const,
    words: track.words,
    cues: track.cues.map((c) => ({ start: c.start, end: c.end, text: c.lines.join('\n'), words: c.words })),
  };
}

/** `HH:MM:SS,mmm` (SRT) or `HH:MM:SS.mmm` (WebVTT). */
export function timestamp(sec: number, separator: ',' | '.'): string {
  const total = Math.max(0, Math.round(sec * 1000));
  const h = Math.floor(total / 3_600_000);
  const m = Math.floor((total % 3_600_000) / 60_000);
  const s = Math.floor((total % 60_000) / 1000);
  return `${pad(h, 2)}:${pad(m, 2)}:${pad(s, 2)}${separator}${pad(total % 1000, 3)}`;
}

/** Cue text is markup in WebVTT: a word's `&`, `<` and `>` are escaped (which also keeps `-->` out). */
const escapeVtt = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const pad = (n: number, width: number) => String(n).padStart(width, '0');
const ms = (sec: number) => Math.round(sec * 1000) / 1000;
