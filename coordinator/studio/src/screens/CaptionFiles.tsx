import { Fragment } from 'preact';
import { hrefOf } from '../api.js';

/** Download links for caption files (SRT, WebVTT, word-level JSON; docs/captions.md) and editor
 *  timelines (FCPXML, OTIO, EDL; docs/exports.md). A short's follow the render dialog's jump-cut
 *  switches; a render's are what it burned in. */
export function CaptionFiles({ base, label, query = {} }: { base: string; label: string; query?: Record<string, string | boolean> }) {
  const formats = [
    ['srt', 'SRT'],
    ['vtt', 'VTT'],
    ['json', 'JSON'],
  ] as const;
  const timelines = [
    ['fcpxml', 'FCPXML'],
    ['otio', 'OTIO'],
    ['edl', 'EDL'],
  ] as const;
  const q = Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)]));
  return (
    <>
      <p class="caption-files" data-testid="caption-files">
        <span class="muted">Captions:</span>{' '}
        {formats.map(([ext, name]) => (
          <Fragment key={ext}>
            <a href={hrefOf(`${base}/captions.${ext}`, q)} download aria-label={`Download the captions of ${label} as ${name}`}>
              {name}
            </a>{' '}
          </Fragment>
        ))}
      </p>
      <p class="caption-files" data-testid="timeline-files">
        <span class="muted">Timeline:</span>{' '}
        {timelines.map(([ext, name]) => (
          <Fragment key={ext}>
            <a href={hrefOf(`${base}/timeline.${ext}`, q)} download aria-label={`Download the edit of ${label} as ${name}`}>
              {name}
            </a>{' '}
          </Fragment>
        ))}
      </p>
    </>
  );
}
