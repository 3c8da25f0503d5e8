import { useState } from 'preact/hooks';

/** Where a video file is dropped, or chosen with the file picker; it names the file chosen. */
export function DropZone({
  file,
  onDropped,
  onChoose,
}: {
  file: File | null;
  /** The file dropped (undefined: the drop held none). */
  onDropped: (file: File | undefined) => void;
  onChoose: (file: File | null) => void;
}) {
  const [dragging, setDragging] = useState(false);
  return (
    <div
      class={`drop-zone${dragging ? ' dragging' : ''}`}
      data-testid="drop-zone"
      onDragEnter={(e) => {
        e.preventDefault();
        setDragging(true);
      }}
      onDragOver={(e) => {
        e.preventDefault();
        if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy';
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={(e) => {
        e.preventDefault();
        setDragging(false);
        onDropped(e.dataTransfer?.files?.[0]);
      }}
    >
      <span>…or drop a video file here, or</span>
      <label class="button" for="upload-file">
        choose a file
      </label>
      <input
        id="upload-file"
        class="visually-hidden"
        type="file"
        accept="video/*"
        onChange={(e) => onChoose((e.target as HTMLInputElement).files?.[0] ?? null)}
      />
      {file ? (
        <span class="muted">
          {file.name} ({(file.size / 1e6).toFixed(1)} MB)
        </span>
      ) : null}
    </div>
  );
}
