import { seconds } from '../api.js';
import type { Word } from '../captions.js';

/** The selected word's correction: its new text (a space splits it), or join it with the next, or delete it. */
export function WordEditor({
  word,
  canJoin,
  draft,
  busy,
  onDraft,
  onSave,
  onJoin,
  onDelete,
  onCancel,
}: {
  word: Word;
  /** Whether a word follows it to join with. */
  canJoin: boolean;
  draft: string;
  busy: boolean;
  onDraft: (text: string) => void;
  onSave: () => void;
  onJoin: () => void;
  onDelete: () => void;
  onCancel: () => void;
}) {
  return (
    <form
      class="word-editor"
      data-testid="word-editor"
      onSubmit={(e) => {
        e.preventDefault();
        onSave();
      }}
    >
      <label for="word-text">Word at {seconds(word.start)}</label>
      <input id="word-text" value={draft} autoFocus onInput={(e) => onDraft((e.target as HTMLInputElement).value)} />
      <button type="submit" disabled={busy}>
        Save
      </button>
      <button type="button" disabled={busy || !canJoin} onClick={onJoin}>
        Join with next
      </button>
      <button type="button" disabled={busy} onClick={onDelete}>
        Delete word
      </button>
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
    </form>
  );
}
