import { useState } from 'preact/hooks';
import { api, stageOf } from '../api.js';
import { go } from '../router.js';
import { startUpload } from '../upload.js';
import { ErrorBox, Pager, ProgressBar, useLoad } from '../ui.js';

interface JobItem { stage?: string; id: string; title: string | null; status: string; progress: number; source: string; createdAt: string; shortsCount: number; cost: number | null }

const LIMIT = 10;

function UploadPanel({ onUploaded }: { onUploaded: () => void }) {
  const [file, setFile] = useState<File | null>(null);
  const [title, setTitle] = useState('');
  const [sent, setSent] = useState<{ sent: number; total: number } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const [abort, setAbort] = useState<(() => void) | null>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!file) return;
    setError(null);
    setDone(null);
    setSent({ sent: 0, total: file.size });
    const up = startUpload(file, { title: title || file.name, onProgress: (s, total) => setSent({ sent: s, total }) });
    setAbort(() => up.abort);
    try {
      const { jobId } = await up.done;
      setDone(jobId);
      setFile(null);
      setTitle('');
      (document.getElementById('upload-file') as HTMLInputElement).value = '';
      onUploaded();
    } catch (err) {
      setError(err);
    } finally {
      setSent(null);
      setAbort(null);
    }
  };
  const pct = sent ? (sent.sent / Math.max(1, sent.total)) * 100 : 0;
  return (
    <section class="panel" aria-labelledby="upload-title">
      <h2 id="upload-title">New job from a video file</h2>
      <form class="row" onSubmit={submit}>
        <div class="grow">
          <label for="upload-file">Video file</label>
          <input id="upload-file" type="file" accept="video/*" onChange={(e) => setFile((e.target as HTMLInputElement).files?.[0] ?? null)} />
        </div>
        <div class="grow">
          <label for="upload-title-input">Title</label>
          <input id="upload-title-input" value={title} placeholder={file?.name ?? 'Job title'} onInput={(e) => setTitle((e.target as HTMLInputElement).value)} />
        </div>
        <button class="primary" type="submit" disabled={!file || !!sent}>Upload</button>
        {abort ? <button type="button" onClick={() => { abort(); setSent(null); setAbort(null); }}>Cancel</button> : null}
      </form>
      {sent ? (
        <div style={{ marginTop: '10px' }}>
          <ProgressBar value={pct} label="Upload progress" />
          <span class="muted" aria-live="polite">Uploading: {Math.round(pct)}% ({(sent.sent / 1e6).toFixed(1)} of {(sent.total / 1e6).toFixed(1)} MB)</span>
        </div>
      ) : null}
      {done ? <div class="notice" role="status">Uploaded. <a href={`#/jobs/${done}`}>Open the new job</a></div> : null}
      <ErrorBox error={error} />
    </section>
  );
}

export function Jobs() {
  const [query, setQuery] = useState('');
  const [search, setSearch] = useState('');
  const [status, setStatus] = useState('all');
  const [offset, setOffset] = useState(0);
  const list = useLoad(
    () => api<{ data: JobItem[]; total: number }>('GET', '/api/jobs', { query: { limit: LIMIT, offset, query: search, status } }),
    [search, status, offset],
    { pollMs: 2000, poll: (v) => v.data.some((j) => j.status === 'PROCESSING') },
  );

  return (
    <>
      <h1>Jobs</h1>
      <UploadPanel onUploaded={() => { setOffset(0); list.reload(); }} />
      <section class="panel" aria-label="Job list">
        <form class="row" role="search" onSubmit={(e) => { e.preventDefault(); setOffset(0); setSearch(query); }}>
          <div class="grow">
            <label for="job-search">Search titles</label>
            <input id="job-search" type="search" value={query} onInput={(e) => setQuery((e.target as HTMLInputElement).value)} />
          </div>
          <div>
            <label for="job-status">Status</label>
            <select id="job-status" value={status} onChange={(e) => { setOffset(0); setStatus((e.target as HTMLSelectElement).value); }}>
              <option value="all">All</option>
              <option value="PROCESSING">Processing</option>
              <option value="COMPLETED">Completed</option>
              <option value="FAILED">Failed</option>
            </select>
          </div>
          <button type="submit">Search</button>
        </form>
        <ErrorBox error={list.error} />
        {list.data && list.data.data.length === 0 ? <p class="muted">No jobs match.</p> : null}
        {list.data && list.data.data.length ? (
          <table class="cards">
            <thead><tr><th>Title</th><th>Status</th><th>Stage</th><th>Progress</th><th>Shorts</th><th>Source</th><th>Created</th></tr></thead>
            <tbody>
              {list.data.data.map((j) => (
                <tr key={j.id} data-job-id={j.id}>
                  <td data-label="Title"><a href={`#/jobs/${j.id}`}>{j.title || 'Untitled job'}</a></td>
                  <td data-label="Status"><span class={`status ${j.status}`}>{j.status}</span></td>
                  <td data-label="Stage" class="stage">{stageOf(j)}</td>
                  <td data-label="Progress" style={{ minWidth: '110px' }}>
                    <ProgressBar value={j.progress} label={`Progress of ${j.title ?? 'job'}`} state={j.status === 'COMPLETED' ? 'done' : j.status === 'FAILED' ? 'failed' : undefined} />
                    <span class="muted">{j.progress}%</span>
                  </td>
                  <td data-label="Shorts">{j.shortsCount}</td>
                  <td data-label="Source">{j.source === 'WEB_APP' ? 'Studio' : 'API'}</td>
                  <td data-label="Created">{new Date(j.createdAt).toLocaleString()}</td>
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
