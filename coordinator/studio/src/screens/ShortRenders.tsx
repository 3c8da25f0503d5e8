import { useEffect } from 'preact/hooks';
import type { ListedRender, RenderList, RenderStatus } from '@shorts/common/api/renders';
import { api, seconds } from '../api.js';
import { ErrorBox, ProgressBar, useLoad } from '../ui.js';
import { PostForm } from './Social.js';

// Every render of a short, newest first, as GET /api/jobs/:jobId/renders gives them: they stay on the
// job page after a reload, each with its first frame, size and style, live progress, play, download
// (named "<short title> – <preset> – <size>.mp4") and post; each says how it was made: preset,
// size, jump cuts on or off, layout, duration and date.

const running = (r: ListedRender) => r.type === 'queued' || r.type === 'progress';

const presetName = (r: ListedRender) => (r.brandPreset ? (r.brandPreset.name ?? 'a deleted brand preset') : r.captionPreset);

function jumpCutsText(r: ListedRender): string {
  const cut = [r.jumpCuts.removeSilences ? 'silences' : '', r.jumpCuts.removeFillers ? 'filler words' : ''].filter(Boolean);
  return cut.length ? `jump cuts on (${cut.join(', ')})` : 'jump cuts off';
}

/** The output's seconds once done (jump cuts shorten it), else the short's. */
function durationText(r: ListedRender): string {
  const sec = r.type === 'done' && r.length ? r.length : r.shortSec;
  return sec ? seconds(sec) : '';
}

/** "<short title> – <preset> – <size>.mp4", with the characters file systems refuse left out. */
export function downloadName(title: string, r: ListedRender): string {
  const clean = (s: string) =>
    [...s]
      .map((c) => (c < ' ' || '\\/:*?"<>|'.includes(c) ? ' ' : c))
      .join('')
      .replace(/\s+/g, ' ')
      .trim();
  return `${clean(title) || 'Short'} – ${clean(presetName(r))} – ${r.output.width}x${r.output.height}.mp4`;
}

export function ShortRenders({
  jobId,
  shortId,
  title,
  refresh,
  live,
}: {
  jobId: string;
  shortId: number;
  title: string;
  refresh: unknown;
  /** The render panel's latest status of the render it started: shown here as is, so both agree. */
  live?: { renderId: string; status: RenderStatus } | null;
}) {
  const list = useLoad(() => api<RenderList>('GET', `/api/jobs/${jobId}/renders`, { query: { shortId } }), [jobId, shortId, refresh], {
    pollMs: 1500,
    poll: (l) => l.data.some(running),
  });
  // The panel polls its render too: while the list has it running, the panel's status is shown (the
  // same numbers in both places), and the list is read again when it ends (for its URL and thumbnail),
  // so it never stays at its last progress.
  const renders = (list.data?.data ?? []).map((r) =>
    live && r.renderId === live.renderId && running(r) ? ({ ...r, ...live.status } as ListedRender) : r,
  );
  const liveType = live?.status.type;
  useEffect(() => {
    if (liveType === 'done' || liveType === 'error') list.reload();
  }, [live?.renderId, liveType]);
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
            <p class="render-facts">
              <strong data-testid="render-preset">{presetName(r)}</strong>
              {' · '}
              <span data-testid="render-size">
                {r.output.width}x{r.output.height}
              </span>
              {r.brandPreset ? <span class="muted"> · {r.captionPreset}</span> : null}
              {' · '}
              <span data-testid="render-jump-cuts">{jumpCutsText(r)}</span>
              {' · '}
              <span data-testid="render-layout">{r.layouts.length ? `layout ${r.layouts.join(', ')}` : 'centre crop'}</span>
              {' · '}
              <span data-testid="render-duration">{durationText(r)}</span>
              {' · '}
              <time class="muted" data-testid="render-date" dateTime={r.createdAt}>
                {new Date(r.createdAt).toLocaleString()}
              </time>
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
                  <a class="button" href={r.url} download={downloadName(title, r)} data-testid="render-download">
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
