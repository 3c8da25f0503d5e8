import type { ShortScores } from '@shorts/common/tasks/analyze-video';
/**
 * One short as the job result carries it (the bearer-form short of the contract, less the crop
 * URL the renderer adds). `startId`/`endId` are word indexes into the transcript, inclusive; they
 * are null for user-defined shorts, which also have no `reason` or `score`.
 */
export interface Short {
  /** 0..n-1 in order of start time. */
  id: number;
  title: string;
  reason?: string;
  startTime: number;
  endTime: number;
  startId: number | null;
  endId: number | null;
  text: string;
  /** 'model': the language model wrote the title; absent: it is made from the words (or is the client's). */
  titledBy?: 'model';
  /** 0-100, from `scores` (score.ts); absent for the client's own times and picture-chosen shorts. */
  score?: number;
  scores?: ShortScores;
}

/** The contract's limit for automatically generated shorts. */
export const MAX_SHORT_SEC = 90;

/** Ids follow start time, as the contract requires. */
export function numberShorts<T extends Omit<Short, 'id'>>(shorts: T[]): Array<T & { id: number }> {
  return [...shorts].sort((a, b) => a.startTime - b.startTime || a.endTime - b.endTime).map((s, id) => ({ ...s, id }));
}
