import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { seconds } from '../api.js';
import type { Word } from '../captions.js';
import { ErrorBox } from '../ui.js';
import { useTranscriptEdits } from './transcript-edits.js';
import { WordEditor } from './WordEditor.js';

// The short's words, as the captions will show them: played from a word by a click, and corrected in
// place (fix, split, join, delete) through PATCH /api/jobs/:jobId/transcription. Every edit keeps its
// inverse, so Undo restores the words exactly (with their timings) until the page is left.

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
  const { undo, busy, error, apply, undoLast } = useTranscriptEdits(jobId, revision, words, onChanged, () => setSelected(null));

  const shown = words.map((w, index) => ({ ...w, index })).filter((w) => w.start >= from - 0.01 && w.start < to);
  const activeIndex = shown.findIndex(
    (w, i) => activeTime >= w.start && (i === shown.length - 1 ? activeTime < w.end + 0.3 : activeTime < shown[i + 1]!.start),
  );

  const save = () => {
    if (selected === null) return;
    const parts = draft.trim().split(/\s+/).filter(Boolean);
    if (!parts.length) return apply({ op: 'delete', index: selected });
    if (parts.length === 1)
      return parts[0] === words[selected]!.text ? setSelected(null) : apply({ op: 'replace', index: selected, text: parts[0]! });
    return apply({ op: 'split', index: selected, texts: parts });
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
        <WordEditor
          word={words[selected]!}
          canJoin={selected + 1 < words.length}
          draft={draft}
          busy={busy}
          onDraft={setDraft}
          onSave={() => void save()}
          onJoin={() => void apply({ op: 'join', index: selected, count: 2 })}
          onDelete={() => void apply({ op: 'delete', index: selected })}
          onCancel={() => setSelected(null)}
        />
      ) : null}
    </>
  );
}
