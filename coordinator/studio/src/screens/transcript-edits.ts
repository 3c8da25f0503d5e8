import { useState } from 'preact/hooks';
import type { TranscriptEditResponse } from '@shorts/common/api/jobs';
import { api, ApiError } from '../api.js';
import type { Word } from '../captions.js';

export type Edit =
  | { op: 'replace'; index: number; text: string }
  | { op: 'join'; index: number; count: number }
  | { op: 'split'; index: number; texts: string[] }
  | { op: 'delete'; index: number }
  | { op: 'insert'; index: number; text: string; start: number; end: number };

/** The edits that take `after` back to `before` around the words one edit changed. */
function inverseOf(edit: Edit, before: Word[]): Edit[] {
  const word = before[edit.index]!;
  const insert = (i: number, w: Word): Edit => ({ op: 'insert', index: i, text: w.text, start: w.start, end: w.end });
  switch (edit.op) {
    case 'replace':
      return [{ op: 'replace', index: edit.index, text: word.text }];
    case 'delete':
      return [insert(edit.index, word)];
    case 'join':
      return [
        { op: 'delete', index: edit.index },
        ...before.slice(edit.index, edit.index + edit.count).map((w, k) => insert(edit.index + k, w)),
      ];
    case 'split':
      return [...edit.texts.map(() => ({ op: 'delete', index: edit.index }) as Edit), insert(edit.index, word)];
    case 'insert':
      return [{ op: 'delete', index: edit.index }];
  }
}

/**
 * The transcript's edits, sent with the revision they were made on; each one's inverse is kept, so
 * Undo restores the words exactly until the page is left (or the transcript changed elsewhere).
 */
export function useTranscriptEdits(jobId: string, revision: number, words: Word[], onChanged: () => void, onSent: () => void) {
  const [undo, setUndo] = useState<Edit[][]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const send = async (edits: Edit[], inverse: Edit[] | null) => {
    setBusy(true);
    setError(null);
    try {
      await api<TranscriptEditResponse>('PATCH', `/api/jobs/${jobId}/transcription`, { body: { revision, edits } });
      if (inverse) setUndo((stack) => [...stack, inverse]);
      onSent();
      onChanged();
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 409
          ? new Error('The transcript was changed elsewhere; it has been reloaded, please edit again.')
          : err,
      );
      if (err instanceof ApiError && err.status === 409) {
        setUndo([]);
        onChanged();
      }
    } finally {
      setBusy(false);
    }
  };
  const apply = (edit: Edit) => send([edit], inverseOf(edit, words));
  const undoLast = () => {
    const last = undo[undo.length - 1];
    if (!last) return;
    setUndo((stack) => stack.slice(0, -1));
    void send(last, null);
  };

  return { undo, busy, error, apply, undoLast };
}
