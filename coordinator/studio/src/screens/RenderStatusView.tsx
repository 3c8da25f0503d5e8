import type { RenderStatus } from '@shorts/common/api/renders';
import { ProgressBar } from '../ui.js';
import { CaptionPositionNote } from '../CaptionPositionNote.js';
import { CaptionFiles } from './CaptionFiles.js';
import { PostForm } from './Social.js';

/** Where the render the panel started stands: queued, rendering, failed, or done (with the video, its files and a post form). */
export function RenderStatusView({ renderId, status: s, title }: { renderId: string; status: RenderStatus; title: string }) {
  return (
    <div data-testid="render-status" style={{ marginTop: '10px' }}>
      {s.type === 'queued' ? <p>Queued: position {s.queuePosition} in the render queue</p> : null}
      {s.type === 'progress' ? (
        <>
          <p>Rendering: {Math.round((s.progress ?? 0) * 100)}%</p>
          <ProgressBar value={(s.progress ?? 0) * 100} label="Render progress" />
        </>
      ) : null}
      <CaptionPositionNote status={s} />
      {(s.type === 'queued' || s.type === 'progress') && s.stage ? (
        <p class="stage" role="status">
          {s.stage}
        </p>
      ) : null}
      {s.type === 'error' ? (
        <div class="error" role="alert">
          {s.message}
          {s.code ? ` (${s.code})` : ''}
        </div>
      ) : null}
      {s.type === 'done' ? (
        <>
          <p class="notice" role="status">
            Rendered ({((s.size ?? 0) / 1e6).toFixed(2)} MB{s.length ? `, ${s.length.toFixed(1)} s` : ''})
          </p>
          <video
            src={s.url}
            preload="metadata"
            controls
            playsInline
            aria-label="Rendered short"
            data-testid="render-video"
            style={{ width: '100%', maxWidth: '270px', display: 'block', margin: '0 auto' }}
          />
          <p>
            <a class="button" href={s.url} download={`${title.replace(/[^\w.-]+/g, '_')}.mp4`}>
              Download MP4
            </a>
          </p>
          <CaptionFiles base={`/api/render/${renderId}`} label="this render" />
          {s.fileId ? <PostForm fileId={s.fileId} defaultCaption={title} /> : null}
        </>
      ) : null}
    </div>
  );
}
