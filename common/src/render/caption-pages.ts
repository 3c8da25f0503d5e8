// Which words a caption shows together, and when: the render's burned-in captions (the agent's ASS
// script) and the caption files a client downloads (coordinator/src/captions/) page words alike.
import { editedDuration, editedWords, type JumpCutPlan } from './jump-cuts.js';

export interface CaptionWord {
  text: string;
  start: number; // seconds from the clip start
  end: number;
}

export interface CaptionPage {
  words: CaptionWord[];
  start: number;
  end: number; // held until the next page when the gap is shorter than a pause
}

export const PAUSE_SEC = 0.6;
const SENTENCE_END = /[.!?…。！？]["'”’)\]]*$/;

/** Groups words into pages: at most `maxWordsInPage`, a new page after a pause or a sentence end. */
export function buildCaptionPages(words: CaptionWord[], maxWordsInPage: number, pauseSec = PAUSE_SEC): CaptionPage[] {
  const max = Math.max(1, Math.floor(maxWordsInPage));
  const clean = words
    .map((w) => ({ text: w.text.replace(/\s+/g, ' ').trim(), start: w.start, end: Math.max(w.start, w.end) }))
    .filter((w) => w.text !== '' && Number.isFinite(w.start) && Number.isFinite(w.end))
    .sort((a, b) => a.start - b.start);
  const pages: CaptionPage[] = [];
  let cur: CaptionWord[] = [];
  const flush = () => {
    if (cur.length) pages.push({ words: cur, start: cur[0]!.start, end: cur[cur.length - 1]!.end });
    cur = [];
  };
  for (const w of clean) {
    const prev = cur[cur.length - 1];
    if (prev && (cur.length >= max || w.start - prev.end >= pauseSec || SENTENCE_END.test(prev.text))) flush();
    cur.push(w);
  }
  flush();
  // Hold a page on screen until the next one when the gap is short, so captions do not blink.
  for (let i = 0; i + 1 < pages.length; i++) {
    const next = pages[i + 1]!;
    if (next.start - pages[i]!.end < pauseSec) pages[i]!.end = next.start;
  }
  return pages;
}

/** Words overlapping the clip, in clip time. */
export function clipWords(words: readonly CaptionWord[], start: number, end: number): CaptionWord[] {
  return words
    .filter((w) => w.end > start && w.start < end)
    .map((w) => ({ text: w.text, start: Math.max(0, w.start - start), end: Math.min(end, w.end) - start }));
}

/** The words a clip [start, end) of the source captions, on the clip's own clock: with jump cuts
 *  (a plan that cuts something) on the edited clock, words in removed ranges and cut fillers gone. */
export function captionedWords(
  words: readonly CaptionWord[],
  start: number,
  end: number,
  edit: JumpCutPlan | null | undefined,
): CaptionWord[] {
  if (edit?.cuts.length) return clipWords(editedWords(edit, words), 0, editedDuration(edit));
  return clipWords(words, start, end);
}
