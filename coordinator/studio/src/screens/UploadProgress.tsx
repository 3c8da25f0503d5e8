import { ProgressBar } from '../ui.js';

/** The upload's progress in percent and megabytes, with Cancel while it can still be stopped. */
export function UploadProgress({ sent, onCancel }: { sent: { sent: number; total: number }; onCancel: (() => void) | null }) {
  const pct = (sent.sent / Math.max(1, sent.total)) * 100;
  return (
    <div style={{ marginTop: '10px' }}>
      <ProgressBar value={pct} label="Upload progress" />
      <span class="muted" aria-live="polite">
        Uploading: {Math.round(pct)}% ({(sent.sent / 1e6).toFixed(1)} of {(sent.total / 1e6).toFixed(1)} MB)
      </span>
      {onCancel ? (
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      ) : null}
    </div>
  );
}
