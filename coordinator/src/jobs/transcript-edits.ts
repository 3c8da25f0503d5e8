// Corrections to a completed job's transcript: offline recognition gets words wrong, and those words
// become the captions. An edit never moves a word in time beyond what it asks: a fixed word keeps its
// timing, joined words span from the first's start to the last's end, a split word's time is shared
// among its parts by their length, a deleted word is gone, an inserted one fits the pause it goes in
// (so the studio's undo restores words exactly). The shorts keep their times; their text and word
// indices follow, and every render made afterwards reads the corrected words (renders.ts takes them
// from jobs.data).
//
// Each change bumps the transcript's revision; an edit names the revision it was made on, so two
// editors working from the same page cannot silently overwrite each other: the second gets a 409.
import { z } from 'zod';
import { joinWords, type Word } from '@shorts/common/text/transcript';
import { titleFromTranscript, type TitleOptions } from '@shorts/common/text/title';
import type { TitleSource } from '@shorts/common/api/jobs';
import { AppError, badRequest, conflict, notFound } from '../errors.js';
import { isId } from '../ids.js';
import type { Db } from '../db/db.js';
import { JOB_STATUS, type JobData, type StoredShort } from './jobs.js';
import type { JobOptions } from './job-input.js';

/** A word as edited: no whitespace inside (a word with a space is two words: split it). */
const wordText = z
  .string()
  .trim()
  .min(1, 'a word cannot be empty (delete it instead)')
  .max(100)
  .refine((s) => !/\s/.test(s), 'a word holds no whitespace; use "split" to make two words');
const index = z.number().int().min(0);

export const transcriptEditSchema = z.discriminatedUnion('op', [
  z.object({ op: z.literal('replace'), index, text: wordText }).describe("Fix one word's text; its timing is kept"),
  z
    .object({ op: z.literal('join'), index, count: z.number().int().min(2).max(20), text: wordText.optional() })
    .describe(
      "Join `count` words from `index` into one, from the first's start to the last's end; `text` defaults to the words run together",
    ),
  z
    .object({ op: z.literal('split'), index, texts: z.array(wordText).min(2).max(20) })
    .describe('Split one word into several; its time is shared among them by their length'),
  z.object({ op: z.literal('delete'), index }).describe('Remove one word (its time becomes a pause)'),
  z
    .object({ op: z.literal('insert'), index, text: wordText, start: z.number().min(0), end: z.number().min(0) })
    .describe(
      'Put a word before the word at `index` (at the end when `index` is the word count), in the pause between its neighbours (how an undo of a delete, join or split restores words exactly)',
    ),
]);
export type TranscriptEdit = z.infer<typeof transcriptEditSchema>;

export const transcriptEditsBodySchema = z.object({
  organizationId: z.string().optional().describe('For session and bearer-token callers, here or in the query'),
  revision: z
    .number()
    .int()
    .min(0)
    .describe(
      "The transcript revision the edits were made on (from the job's `data.transcription.revision`, 0 before any edit); a stale revision is refused with 409",
    ),
  edits: z
    .array(transcriptEditSchema)
    .min(1)
    .max(500)
    .describe('Applied in order; each index refers to the words as the edits before it left them'),
});

export interface EditedTranscript {
  revision: number;
  text: string;
  words: Word[];
}

/** Applies `edits` in order to `words` (not changed), returning the new words. */
export function applyTranscriptEdits(words: readonly Word[], edits: readonly TranscriptEdit[]): Word[] {
  const current = words.map((w) => ({ ...w }));
  edits.forEach((edit, k) => {
    const at = (i: number) => {
      if (i >= current.length) throw badRequest(`edits[${k}].index: ${i} is past the last word (${current.length - 1})`);
      return current[i]!;
    };
    switch (edit.op) {
      case 'replace': {
        const w = at(edit.index);
        current[edit.index] = { text: edit.text, start: w.start, end: w.end };
        break;
      }
      case 'join': {
        const last = edit.index + edit.count - 1;
        const first = at(edit.index);
        const end = at(last);
        const joined: Word = {
          text:
            edit.text ??
            current
              .slice(edit.index, last + 1)
              .map((w) => w.text)
              .join(''),
          start: first.start,
          end: end.end,
        };
        current.splice(edit.index, edit.count, joined);
        break;
      }
      case 'split': {
        const w = at(edit.index);
        const total = edit.texts.reduce((n, t) => n + t.length, 0);
        let start = w.start;
        const parts = edit.texts.map((text, i) => {
          const end = i === edit.texts.length - 1 ? w.end : round3(start + ((w.end - w.start) * text.length) / total);
          const part = { text, start, end };
          start = end;
          return part;
        });
        current.splice(edit.index, 1, ...parts);
        break;
      }
      case 'insert': {
        if (edit.index > current.length) throw badRequest(`edits[${k}].index: ${edit.index} is past the end (${current.length})`);
        const before = current[edit.index - 1];
        const after = current[edit.index];
        if (!(edit.end > edit.start) || (before && edit.start < before.end - 1e-6) || (after && edit.end > after.start + 1e-6)) {
          throw badRequest(
            `edits[${k}]: an inserted word must fit in the pause between its neighbours (${before?.end ?? 0} to ${after?.start ?? 'the end'}), ending after it starts`,
          );
        }
        current.splice(edit.index, 0, { text: edit.text, start: edit.start, end: edit.end });
        break;
      }
      case 'delete': {
        at(edit.index);
        current.splice(edit.index, 1);
        break;
      }
    }
  });
  return current;
}

/** Who made the short's title (and so whether it follows corrections to its words): as stored, or
 *  for a short stored before that was kept, the words when its title is still the one they make. */
export function titleSourceOf(short: StoredShort, words: readonly Word[]): TitleSource {
  if (short.titleSource) return short.titleSource;
  if (short.startId === null || short.endId === null) return 'user';
  return titleFromTranscript(words, short.startId, short.endId) === short.title ? 'transcript' : 'user';
}

const tokens = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? [];

/** Whether a correction took away a word the title uses: a model's title naming a misheard word is
 *  made again from the corrected words; one the correction does not touch is kept. */
function correctionTouchesTitle(title: string, before: readonly Word[], after: readonly Word[]): boolean {
  const left = new Map<string, number>();
  for (const t of before.flatMap((w) => tokens(w.text))) left.set(t, (left.get(t) ?? 0) + 1);
  for (const t of after.flatMap((w) => tokens(w.text))) left.set(t, (left.get(t) ?? 0) - 1);
  return tokens(title).some((t) => (left.get(t) ?? 0) > 0);
}

/** A short after the words changed: its times stay; its text (and an AI short's first and last word
 *  index) are read again from the words it overlaps, the same words a render captions; a title made
 *  from the words is made again from the corrected ones, by the picker's rule and with the job's
 *  `topics` when `titling` has them (a typed title is kept). */
export function remapShort(
  short: StoredShort,
  words: readonly Word[],
  before: readonly Word[] = words,
  titling: TitleOptions = {},
): StoredShort {
  const overlaps = (w: Word) => w.end > short.startTime && w.start < short.endTime;
  const inside: number[] = [];
  words.forEach((w, i) => {
    if (overlaps(w)) inside.push(i);
  });
  const text = joinWords(inside.map((i) => words[i]!));
  if (short.startId === null || short.endId === null || !inside.length) return { ...short, text };
  const startId = inside[0]!;
  const endId = inside[inside.length - 1]!;
  const source = titleSourceOf(short, before);
  if (source === 'user') return { ...short, startId, endId, text };
  if (source === 'model' && !correctionTouchesTitle(short.title, before.filter(overlaps), words.filter(overlaps)))
    return { ...short, startId, endId, text, titleSource: 'model' };
  return { ...short, startId, endId, text, title: titleFromTranscript(words, startId, endId, titling), titleSource: 'transcript' };
}

/** Applies edits to the job's stored transcript, refusing a stale revision. */
export async function editTranscript(
  db: Db,
  organizationId: string,
  jobId: string,
  body: z.infer<typeof transcriptEditsBodySchema>,
): Promise<EditedTranscript> {
  if (!isId(jobId)) throw notFound('Job not found');
  return db.tx(async (c) => {
    // The row lock makes revision check and write one step: of two edits on one revision, one wins.
    const row = (
      await c.query<{ status: string; data: JobData | null; options: JobOptions | null }>(
        `SELECT status, data, options FROM jobs WHERE id = $1 AND organization_id = $2 AND archived_at IS NULL FOR UPDATE`,
        [jobId, organizationId],
      )
    ).rows[0];
    if (!row) throw notFound('Job not found');
    if (row.status !== JOB_STATUS.completed || !row.data?.transcription)
      throw conflict('The transcript can be edited once the job has COMPLETED');
    const data = row.data;
    const revision = data.transcription.revision ?? 0;
    if (body.revision !== revision) {
      throw new AppError(
        409,
        'Conflict',
        `The transcript is at revision ${revision}, not ${body.revision}: it was edited meanwhile; reload it and apply the edits again`,
      );
    }
    const words = applyTranscriptEdits(data.transcription.words, body.edits);
    const next: JobData = {
      ...data,
      transcription: { ...data.transcription, words, text: joinWords(words), revision: revision + 1 },
      // Titles made again as the picker made them: its topics favour the sentence that names one.
      shorts: data.shorts.map((s) => remapShort(s, words, data.transcription.words, { topics: row.options?.topics })),
    };
    await c.query(`UPDATE jobs SET data = $3, updated_at = now() WHERE id = $1 AND organization_id = $2`, [jobId, organizationId, next]);
    return { revision: revision + 1, text: next.transcription.text, words };
  });
}

const round3 = (v: number) => Math.round(v * 1000) / 1000;
