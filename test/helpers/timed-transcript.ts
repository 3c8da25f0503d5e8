// Transcripts with known word times and no audio, for the highlight picker's tests
// (highlights-selector, highlights-picking): what it picks depends only on the words and their times.
import { joinWords, type Transcript, type Word } from '@shorts/common/text/transcript';

const round = (x: number) => Math.round(x * 1000) / 1000;

/**
 * Words at a steady 2.8 words/s from 1 s on, each lasting by its length; `pauseAfter` seconds of
 * silence after each part (`pauseSec` where a part names none). `punctuated: false` gives the words
 * lower-cased with no punctuation, as a speech recogniser without punctuation writes them.
 */
export function timedTranscript(
  parts: Array<{ text: string; pauseAfter?: number }>,
  opts: { punctuated?: boolean; pauseSec: number },
): Transcript {
  const words: Word[] = [];
  let t = 1.0;
  for (const p of parts) {
    for (const raw of p.text.split(/\s+/).filter(Boolean)) {
      const text = opts.punctuated === false ? raw.toLowerCase().replace(/[^\p{L}\p{N}']/gu, '') : raw;
      const dur = 0.2 + 0.02 * Math.min(10, raw.length);
      words.push({ text, start: round(t), end: round(t + dur), confidence: 0.9 });
      t += 1 / 2.8;
    }
    t += p.pauseAfter ?? opts.pauseSec;
  }
  return { language: 'en', text: joinWords(words), words, durationSec: round(t + 1), backend: 'test' };
}
