import { useState } from 'preact/hooks';
import type { CreatedJob, DeletedJob, JobList, JobListItem } from '@shorts/common/api/jobs';
import { api, stageOf } from '../api.js';
import { go } from '../router.js';
import { startUpload } from '../upload.js';
import { ErrorBox, FilterSelect, Pager, ProgressBar, useAction, useLoad } from '../ui.js';
import { DropZone } from './DropZone.js';
import { JobSourceRow } from './JobSourceRow.js';
import { UploadProgress } from './UploadProgress.js';
import '../workbench.css';

const JOB_STATUSES = [
  ['all', 'All'],
  ['PROCESSING', 'Processing'],
  ['COMPLETED', 'Completed'],
  ['FAILED', 'Failed'],
] as const;

const LIMIT = 10;

/** What a pasted link is: a YouTube id or URL goes as `youtubeVideoId`, anything else as `fileUrl`; the API judges both. */
export function sourceOfLink(link: string): { youtubeVideoId: string } | { fileUrl: string } {
  const value = link.trim();
  if (/^[A-Za-z0-9_-]{11}$/.test(value) || /^(https?:\/\/)?([a-z]+\.)?(youtube\.com|youtube-nocookie\.com|youtu\.be)\//i.test(value))
    return { youtubeVideoId: value };
  return { fileUrl: value };
}

/** The picking options' fields as typed: strings, so that an empty one means "not given". */
interface PickingFields {
  minSec: string;
  maxSec: string;
  maxShorts: string;
  rangeStart: string;
  rangeEnd: string;
  topics: string;
  prompt: string;
  language: string;
}
const NO_PICKING: PickingFields = {
  minSec: '',
  maxSec: '',
  maxShorts: '',
  rangeStart: '',
  rangeEnd: '',
  topics: '',
  prompt: '',
  language: '',
};

/** "90", "1:30" or "1:02:03" in seconds; NaN when it is neither (the API then says what is wrong). */
export function parseClock(text: string): number {
  const parts = text.trim().split(':');
  if (parts.length > 3 || parts.some((p) => !/^\d+(\.\d+)?$/.test(p))) return NaN;
  return parts.reduce((sum, p) => sum * 60 + Number(p), 0);
}

/** The job's `options` from the fields filled in; the API checks them and answers a 400 naming the field. */
export function pickingOptions(f: PickingFields): Record<string, unknown> | undefined {
  const options: Record<string, unknown> = {};
  if (f.minSec.trim() || f.maxSec.trim())
    options.clipLength = {
      ...(f.minSec.trim() ? { min: Number(f.minSec) } : {}),
      ...(f.maxSec.trim() ? { max: Number(f.maxSec) } : {}),
    };
  if (f.maxShorts.trim()) options.maxShorts = Number(f.maxShorts);
  if (f.rangeStart.trim() || f.rangeEnd.trim()) {
    if (!f.rangeEnd.trim()) throw new Error('Give the end of the part to analyse too (a time past the end of the video means its end).');
    options.range = { start: f.rangeStart.trim() ? parseClock(f.rangeStart) : 0, end: parseClock(f.rangeEnd) };
  }
  const topics = f.topics
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  if (topics.length) options.topics = topics;
  if (f.prompt.trim()) options.prompt = f.prompt.trim();
  if (f.language.trim()) options.language = f.language.trim();
  return Object.keys(options).length ? options : undefined;
}

/** How the shorts are picked (issue 40): lengths, how many, which part, about what. */
function PickingPanel({ fields, onChange }: { fields: PickingFields; onChange: (f: PickingFields) => void }) {
  const field = (key: keyof PickingFields, label: string, props: Record<string, unknown> = {}) => (
    <div class="grow">
      <label for={`picking-${key}`}>{label}</label>
      <input
        id={`picking-${key}`}
        value={fields[key]}
        onInput={(e) => onChange({ ...fields, [key]: (e.target as HTMLInputElement).value })}
        {...props}
      />
    </div>
  );
  return (
    <details class="picking-options" data-testid="picking-options">
      <summary>Picking options</summary>
      <p class="muted">For a link; an uploaded file is picked with the defaults. Leave a field empty for its default.</p>
      <div class="row">
        {field('minSec', 'Shortest short (s)', { type: 'number', min: 1, placeholder: '15' })}
        {field('maxSec', 'Longest short (s)', { type: 'number', min: 1, placeholder: '60' })}
        {field('maxShorts', 'At most this many shorts', { type: 'number', min: 1, max: 20, placeholder: 'about one per 90 s, up to 5' })}
      </div>
      <div class="row">
        {field('rangeStart', 'Only from (s or m:ss)', { placeholder: '0:00' })}
        {field('rangeEnd', 'to (s or m:ss)', { placeholder: 'the end' })}
        {field('language', 'Spoken language', { placeholder: 'en', maxLength: 10 })}
      </div>
      <div class="row">
        {field('topics', 'Topics (comma-separated)', { placeholder: 'pricing, onboarding' })}
        {field('prompt', 'Prompt (for a language-model picker)', { placeholder: 'the moments about…', maxLength: 2000 })}
      </div>
    </details>
  );
}

/** One "New job" entry: paste a link, or drop (or pick) a video file for the resumable upload. */
function NewJobPanel({ onCreated }: { onCreated: () => void }) {
  const [link, setLink] = useState('');
  const [title, setTitle] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [sent, setSent] = useState<{ sent: number; total: number } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<{ id: string; how: string } | null>(null);
  const [abort, setAbort] = useState<(() => void) | null>(null);
  const [picking, setPicking] = useState<PickingFields>(NO_PICKING);
  const fromLink = useAction(async () => {
    setDone(null);
    const options = pickingOptions(picking);
    const { id } = await api<CreatedJob>('POST', '/api/jobs', {
      body: {
        functionName: 'VideoShorts',
        ...sourceOfLink(link),
        ...(title.trim() ? { name: title.trim() } : {}),
        ...(options ? { options } : {}),
      },
    });
    setDone({ id, how: 'Job started.' });
    setLink('');
    setTitle('');
    onCreated();
  });

  const upload = async (chosen: File) => {
    setError(null);
    setDone(null);
    // Nothing to upload: say so before a request, rather than a job that fails on a 0-byte source.
    if (chosen.size === 0) {
      setError(new Error(`The file is empty: ${chosen.name} has 0 bytes. Choose a video file with something in it.`));
      return;
    }
    setSent({ sent: 0, total: chosen.size });
    const up = startUpload(chosen, { title: title.trim() || chosen.name, onProgress: (s, total) => setSent({ sent: s, total }) });
    setAbort(() => up.abort);
    try {
      const { jobId } = await up.done;
      if (jobId) setDone({ id: jobId, how: 'Uploaded.' });
      setFile(null);
      setTitle('');
      const input = document.getElementById('upload-file') as HTMLInputElement | null;
      if (input) input.value = '';
      onCreated();
    } catch (err) {
      setError(err);
    } finally {
      setSent(null);
      setAbort(null);
    }
  };
  const submit = (e: Event) => {
    e.preventDefault();
    if (link.trim()) void fromLink.run();
    else if (file) void upload(file);
  };
  const onDrop = (dropped: File | undefined) => {
    if (!dropped) return;
    if (!dropped.type.startsWith('video/') && !/\.(mp4|mov|m4v|webm|mkv|avi)$/i.test(dropped.name)) {
      setError(new Error(`${dropped.name} is not a video file`));
      return;
    }
    setFile(dropped);
    setLink('');
    void upload(dropped);
  };
  const busy = !!sent || fromLink.busy;
  return (
    <section class="panel new-job" aria-labelledby="new-job-title">
      <h2 id="new-job-title">New job</h2>
      <form onSubmit={submit}>
        <JobSourceRow
          link={link}
          title={title}
          file={file}
          busy={busy}
          onLink={(next) => {
            setLink(next);
            setFile(null);
          }}
          onTitle={setTitle}
        />
        <DropZone
          file={file}
          onDropped={onDrop}
          onChoose={(f) => {
            setFile(f);
            if (f) setLink('');
          }}
        />
        <PickingPanel fields={picking} onChange={setPicking} />
      </form>
      {sent ? (
        <UploadProgress
          sent={sent}
          onCancel={
            abort
              ? () => {
                  abort();
                  setSent(null);
                  setAbort(null);
                }
              : null
          }
        />
      ) : null}
      {done ? (
        <div class="notice" role="status">
          {done.how} <a href={`#/jobs/${done.id}`}>Open the new job</a>
        </div>
      ) : null}
      <ErrorBox error={error ?? fromLink.error} />
    </section>
  );
}

/** Retry (a new job from the same source and options) and Delete for a finished job. */
function JobActions({ job, onChanged }: { job: JobListItem; onChanged: () => void }) {
  const retry = useAction(async () => {
    await api<CreatedJob>('POST', `/api/jobs/${job.id}/retry`);
    onChanged();
  });
  const remove = useAction(async () => {
    if (!confirm(`Delete "${job.title || 'Untitled job'}" and all its files for good?`)) return;
    await api<DeletedJob>('DELETE', `/api/jobs/${job.id}`);
    onChanged();
  });
  if (job.status === 'PROCESSING') return null;
  return (
    <div class="job-actions">
      {job.status === 'FAILED' ? (
        <button type="button" onClick={() => void retry.run()} disabled={retry.busy} aria-label={`Retry ${job.title || 'job'}`}>
          Retry
        </button>
      ) : null}
      <button
        type="button"
        class="danger"
        onClick={() => void remove.run()}
        disabled={remove.busy}
        aria-label={`Delete ${job.title || 'job'}`}
      >
        Delete
      </button>
      <ErrorBox error={retry.error ?? remove.error} />
    </div>
  );
}

export function Jobs() {
  const [query, setQuery] = useState('');
  const [search, setSearch] = useState('');
  const [status, setStatus] = useState('all');
  const [offset, setOffset] = useState(0);
  const list = useLoad(
    () => api<JobList>('GET', '/api/jobs', { query: { limit: LIMIT, offset, query: search, status } }),
    [search, status, offset],
    { pollMs: 2000, poll: (v) => v.data.some((j) => j.status === 'PROCESSING') },
  );

  return (
    <>
      <h1>Jobs</h1>
      <NewJobPanel
        onCreated={() => {
          setOffset(0);
          list.reload();
        }}
      />
      <section class="panel" aria-label="Job list">
        <form
          class="row"
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            setOffset(0);
            setSearch(query);
          }}
        >
          <div class="grow">
            <label for="job-search">Search titles</label>
            <input id="job-search" type="search" value={query} onInput={(e) => setQuery((e.target as HTMLInputElement).value)} />
          </div>
          <FilterSelect
            id="job-status"
            label="Status"
            value={status}
            options={JOB_STATUSES}
            onChange={(value) => {
              setOffset(0);
              setStatus(value);
            }}
          />
          <button type="submit">Search</button>
        </form>
        <ErrorBox error={list.error} />
        {list.data && list.data.data.length === 0 ? <p class="muted">No jobs match.</p> : null}
        {list.data && list.data.data.length ? (
          <table class="cards">
            <thead>
              <tr>
                <th>Title</th>
                <th>Status</th>
                <th>Stage</th>
                <th>Progress</th>
                <th>Shorts</th>
                <th>Source</th>
                <th>Created</th>
                <th>Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((j) => (
                <tr key={j.id} data-job-id={j.id}>
                  <td data-label="Title">
                    <a href={`#/jobs/${j.id}`}>{j.title || 'Untitled job'}</a>
                  </td>
                  <td data-label="Status">
                    <span class={`status ${j.status}`}>{j.status}</span>
                    {j.status === 'FAILED' && j.message ? (
                      <div class="fail-reason" data-testid="fail-reason">
                        {j.message}
                      </div>
                    ) : null}
                  </td>
                  <td data-label="Stage" class="stage">
                    {stageOf(j)}
                  </td>
                  <td data-label="Progress" style={{ minWidth: '110px' }}>
                    <ProgressBar
                      value={j.progress}
                      label={`Progress of ${j.title ?? 'job'}`}
                      state={j.status === 'COMPLETED' ? 'done' : j.status === 'FAILED' ? 'failed' : undefined}
                    />
                    <span class="muted">{j.progress}%</span>
                  </td>
                  <td data-label="Shorts">{j.shortsCount}</td>
                  <td data-label="Source">{j.source === 'WEB_APP' ? 'Studio' : 'API'}</td>
                  <td data-label="Created">{new Date(j.createdAt).toLocaleString()}</td>
                  <td data-label="Actions">
                    <JobActions job={j} onChanged={() => list.reload()} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
        {list.data ? <Pager total={list.data.total} limit={LIMIT} offset={offset} onPage={setOffset} /> : null}
      </section>
    </>
  );
}

export const openJob = (id: string) => go(`/jobs/${id}`);
