/** The new job's link (or, with a file chosen, its upload), its title, and the button that starts it. */
export function JobSourceRow({
  link,
  title,
  file,
  busy,
  onLink,
  onTitle,
}: {
  link: string;
  title: string;
  file: File | null;
  busy: boolean;
  /** A link typed: it replaces a chosen file. */
  onLink: (link: string) => void;
  onTitle: (title: string) => void;
}) {
  return (
    <div class="row">
      <div class="grow">
        <label for="new-job-link">Paste a YouTube link or a video URL</label>
        <input
          id="new-job-link"
          type="text"
          inputMode="url"
          autoComplete="off"
          placeholder="https://www.youtube.com/watch?v=… or https://…/talk.mp4"
          value={link}
          onInput={(e) => onLink((e.target as HTMLInputElement).value)}
        />
      </div>
      <div class="grow">
        <label for="upload-title-input">Title (optional)</label>
        <input
          id="upload-title-input"
          value={title}
          placeholder={file?.name ?? 'Job title'}
          onInput={(e) => onTitle((e.target as HTMLInputElement).value)}
        />
      </div>
      <button class="primary" type="submit" disabled={busy || (!link.trim() && !file)}>
        {link.trim() || !file ? 'Start job' : 'Upload'}
      </button>
    </div>
  );
}
