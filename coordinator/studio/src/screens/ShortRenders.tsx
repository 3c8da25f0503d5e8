import type { ListedRender, RenderList } from '@shorts/common/api/renders';
import { api, seconds } from '../api.js';
import { ErrorBox, ProgressBar, useLoad } from '../ui.js';
import { PostForm } from './Social.js';

// Every render of a short, newest first, as GET /api/jobs/:jobId/renders gives them: they stay on the
// job page after a reload, each with its first frame, size and style, live progress, play, download
// (named after the short) and post.

const running = (r: ListedRender) => r.type === 'queued' || r.type === 'progress';

export function ShortRenders({ jobId, shortId, title, refresh }: { jobId: string; shortId: number; title: string; refresh: unknown }) {
  const list = useLoad(() => api<RenderList>('GET', `/api/jobs/${jobId}/renders`, { query: { shortId } }), [jobId, shortId, refresh], {
    pollMs: 1500,
    poll: (l) => l.data.some(running),
  });
  const renders = list.data?.data ?? [];
  const fileName = `${title.replace(/[^\w.-]+/g, '_') || 'short'}.mp4`;
  return (
    <section class="panel renders-panel" aria-labelledby="renders-title">
      <h2 id="renders-title">
        Renders of “{title}” ({renders.length})
      </h2>
      <ErrorBox error={list.error} />
      {!renders.length && list.data ? <p class="muted">No render yet.</p> : null}
      <ul class="render-list">
        {renders.map((r) => (
          <li key={r.renderId} data-testid="short-render" data-render-id={r.renderId} data-state={r.type}>
            <p>
              <strong data-testid="render-preset">
                {r.brandPreset ? (r.brandPreset.name ?? 'a deleted brand preset') : r.captionPreset}
              </strong>
              {' · '}
              <span data-testid="render-size">
                {r.output.width}x{r.output.height}
              </span>
              {r.brandPreset ? <span class="muted"> · {r.captionPreset}</span> : null} ·{' '}
              <span class="muted">{new Date(r.createdAt).toLocaleString()}</span>
            </p>
            {r.type === 'queued' ? <p>Queued: position {r.queuePosition}</p> : null}
            {r.type === 'progress' ? (
              <>
                <p>Rendering: {Math.round((r.progress ?? 0) * 100)}%</p>
                <ProgressBar value={(r.progress ?? 0) * 100} label={`Progress of the render of ${r.createdAt}`} />
              </>
            ) : null}
            {(r.type === 'queued' || r.type === 'progress') && r.stage ? <p class="stage">{r.stage}</p> : null}
            {r.type === 'error' ? (
              <div class="error">
                {r.message}
                {r.code ? ` (${r.code})` : ''}
              </div>
            ) : null}
            {r.type === 'done' && r.url ? (
              <>
                {/* The stored first frame as the poster; #t=0.1 makes the player show a frame too where there is none. */}
                <video
                  src={`${r.url}#t=0.1`}
                  poster={r.thumbnailUrl}
                  preload="metadata"
                  controls
                  playsInline
                  aria-label={`Render of “${title}”, ${r.output.width}x${r.output.height}`}
                  style={{ width: '100%', maxWidth: '180px', display: 'block' }}
                />
                <p>
                  {r.length ? <span class="muted">{seconds(r.length)} · </span> : null}
                  <a class="button" href={r.url} download={fileName}>
                    Download
                  </a>
                </p>
                {r.fileId ? (
                  <details>
                    <summary>Post</summary>
                    <PostForm fileId={r.fileId} defaultCaption={title} />
                  </details>
                ) : null}
              </>
            ) : null}
          </li>
        ))}
      </ul>
    </section>
  );
}
