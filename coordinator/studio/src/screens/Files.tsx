import { useState } from 'preact/hooks';
import type { DeletedFile, FileList } from '@shorts/common/api/files';
import { api, mb } from '../api.js';
import { ErrorBox, FilterSelect, Pager, ProgressBar, useAction, useLoad } from '../ui.js';

const FILE_TYPES = [
  ['', 'All'],
  ['video', 'Video'],
  ['image', 'Image'],
  ['audio', 'Audio'],
] as const;

const LIMIT = 20;

export function Files() {
  const [type, setType] = useState('');
  const [tags, setTags] = useState('');
  const [appliedTags, setAppliedTags] = useState('');
  const [offset, setOffset] = useState(0);
  const list = useLoad(
    () => api<FileList>('GET', '/api/uploads/files', { query: { type, tags: appliedTags, limit: LIMIT, offset } }),
    [type, appliedTags, offset],
  );
  const remove = useAction(async (id: string) => {
    const res = await api<DeletedFile>('DELETE', `/api/uploads/files/${id}`);
    if (!res.deleted) throw new Error(res.error ?? 'The file was not deleted');
    list.reload();
  });
  const d = list.data;
  return (
    <>
      <h1>Files</h1>
      {d ? (
        <section class="panel" aria-labelledby="storage-title">
          <h2 id="storage-title">Storage</h2>
          <div class="meter">
            <ProgressBar value={d.usedSizePercent} label="Storage used" state={d.usedSizePercent >= 90 ? 'failed' : undefined} />
          </div>
          <p>
            {d.usedSize} MB of {d.subSize} MB used ({d.usedSizePercent}%)
          </p>
        </section>
      ) : null}
      <section class="panel" aria-label="File list">
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            setOffset(0);
            setAppliedTags(tags);
          }}
        >
          <FilterSelect
            id="file-type"
            label="Type"
            value={type}
            options={FILE_TYPES}
            onChange={(value) => {
              setOffset(0);
              setType(value);
            }}
          />
          <div class="grow">
            <label for="file-tags">Tags (any of, comma-separated: source, short, render, upload, watermark)</label>
            <input id="file-tags" value={tags} onInput={(e) => setTags((e.target as HTMLInputElement).value)} />
          </div>
          <button type="submit">Filter</button>
        </form>
        <ErrorBox error={list.error ?? remove.error} />
        {d && !d.files.length ? <p class="muted">No files match.</p> : null}
        {d?.files.length ? (
          <table class="cards">
            <thead>
              <tr>
                <th />
                <th>Name</th>
                <th>Type</th>
                <th>Size</th>
                <th>Length</th>
                <th>Tags</th>
                <th>Created</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {d.files.map((f) => (
                <tr key={f.id}>
                  <td>{f.thumbnailUrl || f.type === 'image' ? <img class="thumb" src={f.thumbnailUrl ?? f.url} alt="" /> : null}</td>
                  <td data-label="Name">
                    <a href={f.url} target="_blank" rel="noopener">
                      {f.name}
                    </a>
                    {f.jobId ? (
                      <div>
                        <a class="muted" href={`#/jobs/${f.jobId}`}>
                          job
                        </a>
                      </div>
                    ) : null}
                  </td>
                  <td data-label="Type">{f.type}</td>
                  <td data-label="Size">{mb(f.size)}</td>
                  <td data-label="Length">{f.length ? `${f.length.toFixed(1)} s` : '—'}</td>
                  <td data-label="Tags">{f.tags.join(', ')}</td>
                  <td data-label="Created">{new Date(f.createdAt).toLocaleString()}</td>
                  <td>
                    <button
                      class="danger"
                      aria-label={`Delete ${f.name}`}
                      onClick={() => {
                        if (confirm(`Delete ${f.name} for good?`)) void remove.run(f.id);
                      }}
                    >
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
        {d ? <Pager total={d.total} limit={LIMIT} offset={offset} onPage={setOffset} /> : null}
      </section>
    </>
  );
}
