import { useEffect, useState } from 'preact/hooks';
import type { BearerJob, BearerJobShort, CreatedJob } from '@shorts/common/api/jobs';
import { api, seconds } from '../api.js';
import { go } from '../router.js';
import { ErrorBox, useAction } from '../ui.js';
import { round1, type ShortEdit } from './short-edits.js';

type Short = BearerJobShort;

const TITLE_SOURCE_WORDS = {
  transcript: '(from the transcript: follows its corrections)',
  model: '(written by the model: made again if a correction changes a word it uses)',
  user: '(your title)',
} as const;

/** Trim, rename, add and remove shorts in place; running the short again as a new job stays as an option. */
export function AdjustShort({
  job,
  short,
  playhead,
  duration,
  edit,
  onSelect,
}: {
  job: BearerJob;
  short: Short;
  playhead: number;
  duration: number;
  edit: ShortEdit;
  onSelect: (id: number) => void;
}) {
  const [start, setStart] = useState(short.startTime);
  const [end, setEnd] = useState(short.endTime);
  const [title, setTitle] = useState(short.title);
  useEffect(() => {
    setStart(short.startTime);
    setEnd(short.endTime);
    setTitle(short.title);
  }, [short.id, short.startTime, short.endTime, short.title]);
  const at = round1(playhead);
  const add = async () => {
    // A new short from the playhead, 30 s long or to the end of the source.
    const added = await edit.run('POST', '', {
      title: `Short at ${seconds(at)}`,
      startTime: at,
      endTime: round1(Math.min(duration, at + 30)),
    });
    if (added) onSelect(added.id);
  };
  const rerun = useAction(async () => {
    const created = await api<CreatedJob>('POST', '/api/jobs', {
      body: {
        functionName: 'VideoShorts',
        name: `${job.title ?? 'Job'} – ${title}`,
        sourceJobId: job.jobId,
        options: { predefinedShorts: [{ title, start, end }] },
      },
    });
    go(`/jobs/${created.id}`);
  });
  const num = (set: (n: number) => void) => (e: Event) => set(Number((e.target as HTMLInputElement).value));
  return (
    <section class="panel" aria-labelledby="adjust-title">
      <h2 id="adjust-title">Edit this short</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          // The title only when it was changed: an unchanged one stays made from the transcript.
          void edit.run('PATCH', `/${short.id}`, { ...(title.trim() !== short.title ? { title } : {}), startTime: start, endTime: end });
        }}
      >
        <div class="row">
          <div class="grow">
            <label for="adj-title">
              Title{' '}
              <span class="muted" data-testid="title-source" data-source={short.titleSource}>
                {TITLE_SOURCE_WORDS[short.titleSource]}
              </span>
            </label>
            <input id="adj-title" value={title} onInput={(e) => setTitle((e.target as HTMLInputElement).value)} />
          </div>
          <div>
            <label for="adj-start">Start (s)</label>
            <input id="adj-start" type="number" step="0.1" min="0" value={start} onInput={num(setStart)} style={{ width: '100px' }} />
          </div>
          <div>
            <label for="adj-end">End (s)</label>
            <input id="adj-end" type="number" step="0.1" min="0" value={end} onInput={num(setEnd)} style={{ width: '100px' }} />
          </div>
        </div>
        <div class="row" style={{ marginTop: '8px' }}>
          <button type="button" disabled={edit.busy} onClick={() => void edit.run('PATCH', `/${short.id}`, { startTime: at })}>
            Start at playhead
          </button>
          <button type="button" disabled={edit.busy} onClick={() => void edit.run('PATCH', `/${short.id}`, { endTime: at })}>
            End at playhead
          </button>
          <button class="primary" type="submit" disabled={edit.busy}>
            Save short
          </button>
        </div>
        <div class="row" style={{ marginTop: '8px' }}>
          <button type="button" disabled={edit.busy} onClick={() => void add()}>
            Add short
          </button>
          <button type="button" class="danger" disabled={edit.busy} onClick={() => void edit.run('DELETE', `/${short.id}`)}>
            Remove short
          </button>
          <button
            type="button"
            disabled={rerun.busy}
            onClick={() => void rerun.run()}
            title="A new job (downloads, transcribes and charges again)"
          >
            Run again as a predefined short
          </button>
        </div>
      </form>
      {short.reframeStale ? (
        <p class="muted" data-testid="reframe-stale">
          This short reaches outside the range that was analysed for reframing: it renders with a centre crop.
        </p>
      ) : null}
      <ErrorBox error={edit.error ?? rerun.error} />
    </section>
  );
}
