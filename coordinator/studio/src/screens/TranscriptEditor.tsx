import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { api, ApiError, seconds } from '../api.js';
import type { TranscriptEditResponse } from '@shorts/common/api/jobs';
import type { Word } from '../captions.js';
import { ErrorBox } from '../ui.js';

// The short's words, as the captions will show them: played from a word by a click, and corrected in
// place (fix, split, join, delete) through PATCH /api/jobs/:jobId/transcription. Every edit keeps its
// inverse, so Undo restores the words exactly (with their timings) until the page is left.

type Edit =
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

export function TranscriptEditor({
  jobId,
  words,
  revision,
  from,
  to,
  activeTime,
  onSeek,
  onChanged,
}: {
  jobId: string;
  /** The whole transcript (edits name indices in it). */
  words: Word[];
  revision: number;
  /** The short's range: its words are those that start in it. */
  from: number;
  to: number;
  activeTime: number;
  onSeek: (t: number) => void;
  /** After an edit (or a refused one): the job is read again (words, revision, shorts' text). */
  onChanged: () => void;
}) {
  const [editing, setEditing] = useState(false);
  const [selected, setSelected] = useState<number | null>(null);
  const [draft, setDraft] = useState('');
  const [undo, setUndo] = useState<Edit[][]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const shown = words.map((w, index) => ({ ...w, index })).filter((w) => w.start >= from - 0.01 && w.start < to);
  const activeIndex = shown.findIndex(
    (w, i) => activeTime >= w.start && (i === shown.length - 1 ? activeTime < w.end + 0.3 : activeTime < shown[i + 1]!.start),
  );

  const send = async (edits: Edit[], inverse: Edit[] | null) => {
    setBusy(true);
    setError(null);
    try {
      await api<TranscriptEditResponse>('PATCH', `/api/jobs/${jobId}/transcription`, { body: { revision, edits } });
      if (inverse) setUndo((stack) => [...stack, inverse]);
      setSelected(null);
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
  const save = () => {
    if (selected === null) return;
    const parts = draft.trim().split(/\s+/).filter(Boolean);
    if (!parts.length) return apply({ op: 'delete', index: selected });
    if (parts.length === 1)
      return parts[0] === words[selected]!.text ? setSelected(null) : apply({ op: 'replace', index: selected, text: parts[0]! });
    return apply({ op: 'split', index: selected, texts: parts });
  };
  const undoLast = () => {
    const last = undo[undo.length - 1];
    if (!last) return;
    setUndo((stack) => stack.slice(0, -1));
    void send(last, null);
  };

  return (
    <>
      <div class="transcript-tools">
        <button
          type="button"
          aria-pressed={editing}
          onClick={() => {
            setEditing(!editing);
            setSelected(null);
          }}
        >
          {editing ? 'Done editing' : 'Edit words'}
        </button>
        {editing ? (
          <button type="button" disabled={!undo.length || busy} onClick={undoLast}>
            Undo
          </button>
        ) : null}
        {editing ? <span class="muted"> Click a word to fix it; a space splits it in two.</span> : null}
      </div>
      <ErrorBox error={error} />
      <div
        class="transcript"
        data-testid="transcript"
        role="group"
        aria-label={
          editing ? 'Transcript; click a word to correct it' : 'Transcript; the spoken word is highlighted, a word plays from there'
        }
      >
        {shown.length ? (
          shown.map((w, i) => (
            <Fragment key={w.index}>
              <button
                type="button"
                class={`w ${i === activeIndex ? 'active' : i < activeIndex ? 'past' : ''} ${selected === w.index ? 'selected' : ''}`}
                aria-current={i === activeIndex ? 'true' : undefined}
                data-index={w.index}
                title={editing ? `Correct “${w.text}” (${seconds(w.start)})` : `Play from ${seconds(w.start)}`}
                onClick={() => (editing ? (setSelected(w.index), setDraft(w.text)) : onSeek(w.start))}
              >
                {w.text}
              </button>{' '}
            </Fragment>
          ))
        ) : (
          <span class="muted">No words in this short.</span>
        )}
      </div>
      {editing && selected !== null ? (
        <form
          class="word-editor"
          data-testid="word-editor"
          onSubmit={(e) => {
            e.preventDefault();
            void save();
          }}
        >
          <label for="word-text">Word at {seconds(words[selected]!.start)}</label>
          <input id="word-text" value={draft} autoFocus onInput={(e) => setDraft((e.target as HTMLInputElement).value)} />
          <button type="submit" disabled={busy}>
            Save
          </button>
          <button
            type="button"
            disabled={busy || selected + 1 >= words.length}
            onClick={() => void apply({ op: 'join', index: selected, count: 2 })}
          >
            Join with next
          </button>
          <button type="button" disabled={busy} onClick={() => void apply({ op: 'delete', index: selected })}>
            Delete word
          </button>
          <button type="button" onClick={() => setSelected(null)}>
            Cancel
          </button>
        </form>
      ) : null}
    </>
  );
}
