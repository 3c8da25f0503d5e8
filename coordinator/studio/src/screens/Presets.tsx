import { useState } from 'preact/hooks';
import { CAPTION_PRESETS } from '@shorts/common/render/presets';
import type { BrandPreset, DeletedPreset } from '@shorts/common/api/brandings';
import type { RenderOptions } from '@shorts/common/render/options';
import { api } from '../api.js';
import { styleFor } from '../captions.js';
import { CaptionLayer } from '../CaptionLayer.js';
import { ErrorBox, useAction, useLoad } from '../ui.js';
import { PresetWatermarkFields, useWatermarkUpload, type DraftWatermark } from './PresetWatermarkFields.js';

interface Draft {
  id?: string;
  name: string;
  description: string;
  preset: string;
  maxWordsInPage: number;
  isDefault: boolean;
  isActive: boolean;
  waterMark: DraftWatermark | null;
  options: RenderOptions;
}

const blank = (): Draft => ({
  name: '',
  description: '',
  preset: 'DEFAULT',
  maxWordsInPage: 4,
  isDefault: false,
  isActive: true,
  waterMark: null,
  options: {},
});
const fromPreset = (p: BrandPreset): Draft => ({
  id: p.id,
  name: p.name,
  description: p.description ?? '',
  preset: p.preset ?? 'DEFAULT',
  maxWordsInPage: p.options?.maxWordsInPage ?? 4,
  isDefault: p.isDefault,
  isActive: p.isActive,
  options: p.options ?? {},
  waterMark: p.options?.waterMark
    ? {
        fileAppId: p.options.waterMark.fileAppId ?? '',
        left: p.options.waterMark.left ?? '40px',
        top: p.options.waterMark.top ?? '40px',
        width: p.options.waterMark.width ?? '160px',
        opacity: String(p.options.waterMark.opacity ?? '1'),
      }
    : null,
});

// The sample is drawn as the render draws it (the shared caption layout), "is" being spoken.
const SAMPLE_PAGE = {
  words: ['This', 'is', 'your', 'caption'].map((text, i) => ({ text, start: i, end: i + 1 })),
  active: 1,
  elapsed: Infinity,
};
const SAMPLE_FRAME = { width: 1080, height: 1920 };

function SamplePreview({ preset }: { preset: string }) {
  const style = styleFor(preset, null);
  return (
    <div
      class="preview"
      style={{ width: '150px', background: 'linear-gradient(160deg,#3a4660,#11151d)' }}
      aria-label={`Sample of the ${preset} caption style`}
    >
      <CaptionLayer style={style} page={SAMPLE_PAGE} frame={SAMPLE_FRAME} />
    </div>
  );
}

function Editor({ initial, onSaved, onCancel }: { initial: Draft; onSaved: () => void; onCancel: () => void }) {
  const [d, setD] = useState(initial);
  const { upload, uploadError, uploadWatermark } = useWatermarkUpload((fileId) =>
    setD((cur) => ({
      ...cur,
      waterMark: { left: '40px', top: '40px', width: '160px', opacity: '1', ...cur.waterMark, fileAppId: fileId },
    })),
  );
  const set = (patch: Partial<Draft>) => setD({ ...d, ...patch });
  const save = useAction(async () => {
    const options: Record<string, unknown> = { ...d.options, maxWordsInPage: d.maxWordsInPage };
    delete options.WaterMark;
    if (d.waterMark?.fileAppId)
      options.waterMark = {
        fileAppId: d.waterMark.fileAppId,
        left: d.waterMark.left,
        top: d.waterMark.top,
        width: d.waterMark.width,
        opacity: d.waterMark.opacity,
      };
    else delete options.waterMark;
    const body = {
      name: d.name,
      description: d.description || undefined,
      preset: d.preset,
      isDefault: d.isDefault,
      options,
      ...(d.id ? { isActive: d.isActive } : {}),
    };
    if (d.id) await api<BrandPreset>('PUT', `/api/organizations/brandings/${d.id}`, { body });
    else await api<BrandPreset>('POST', '/api/organizations/brandings', { body });
    onSaved();
  });
  const wm = d.waterMark;
  const setWm = (patch: Partial<NonNullable<Draft['waterMark']>>) =>
    set({ waterMark: { fileAppId: '', left: '40px', top: '40px', width: '160px', opacity: '1', ...wm, ...patch } });
  return (
    <form
      class="panel"
      aria-label={d.id ? `Edit ${d.name}` : 'New brand preset'}
      onSubmit={(e) => {
        e.preventDefault();
        void save.run();
      }}
    >
      <h2>{d.id ? `Edit “${initial.name}”` : 'New brand preset'}</h2>
      <div class="row">
        <div class="grow">
          <label for="preset-name">Name</label>
          <input id="preset-name" required value={d.name} onInput={(e) => set({ name: (e.target as HTMLInputElement).value })} />
          <label for="preset-desc">Description</label>
          <input
            id="preset-desc"
            value={d.description}
            onInput={(e) => set({ description: (e.target as HTMLInputElement).value })}
            style={{ width: '100%' }}
          />
          <div class="row">
            <div>
              <label for="preset-style">Caption style</label>
              <select id="preset-style" value={d.preset} onChange={(e) => set({ preset: (e.target as HTMLSelectElement).value })}>
                {CAPTION_PRESETS.map((n) => (
                  <option key={n}>{n}</option>
                ))}
              </select>
            </div>
            <div>
              <label for="preset-words">Words per caption page</label>
              <input
                id="preset-words"
                type="number"
                min="1"
                max="20"
                value={d.maxWordsInPage}
                onInput={(e) => set({ maxWordsInPage: Number((e.target as HTMLInputElement).value) })}
                style={{ width: '90px' }}
              />
            </div>
          </div>
          <label class="inline">
            <input type="checkbox" checked={d.isDefault} onChange={(e) => set({ isDefault: (e.target as HTMLInputElement).checked })} />{' '}
            Default for renders
          </label>
          {d.id ? (
            <label class="inline">
              <input type="checkbox" checked={d.isActive} onChange={(e) => set({ isActive: (e.target as HTMLInputElement).checked })} />{' '}
              Active
            </label>
          ) : null}
        </div>
        <SamplePreview preset={d.preset} />
      </div>
      <PresetWatermarkFields wm={wm} set={set} setWm={setWm} upload={upload} uploadError={uploadError} onFile={uploadWatermark} />
      <div class="row">
        <button class="primary" type="submit" disabled={save.busy || upload !== null}>
          Save preset
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
      <ErrorBox error={save.error} />
    </form>
  );
}

export function Presets() {
  const list = useLoad(() => api<BrandPreset[]>('GET', '/api/organizations/brandings'), []);
  const [editing, setEditing] = useState<Draft | null>(null);
  const remove = useAction(async (id: string) => {
    await api<DeletedPreset>('DELETE', `/api/organizations/brandings/${id}`);
    list.reload();
  });
  const makeDefault = useAction(async (id: string) => {
    await api<BrandPreset>('PUT', `/api/organizations/brandings/${id}`, { body: { isDefault: true } });
    list.reload();
  });
  return (
    <>
      <h1>Brand presets</h1>
      {editing ? (
        <Editor
          key={editing.id ?? 'new'}
          initial={editing}
          onSaved={() => {
            setEditing(null);
            list.reload();
          }}
          onCancel={() => setEditing(null)}
        />
      ) : (
        <p>
          <button class="primary" onClick={() => setEditing(blank())}>
            New brand preset
          </button>
        </p>
      )}
      <ErrorBox error={list.error ?? remove.error ?? makeDefault.error} />
      {list.data && !list.data.length ? <p class="muted">No brand presets yet.</p> : null}
      {list.data?.length ? (
        <table class="cards">
          <thead>
            <tr>
              <th>Name</th>
              <th>Style</th>
              <th>Watermark</th>
              <th>State</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {list.data.map((p) => (
              <tr key={p.id}>
                <td data-label="Name">
                  <strong>{p.name}</strong>
                  {p.description ? <div class="muted">{p.description}</div> : null}
                </td>
                <td data-label="Style">
                  {p.preset ?? 'DEFAULT'} · {p.options?.maxWordsInPage ?? 4} words
                </td>
                <td data-label="Watermark">{p.options?.waterMark?.fileAppId ? 'yes' : '—'}</td>
                <td data-label="State">
                  {p.isDefault ? <span class="status COMPLETED">default</span> : null}{' '}
                  {p.isActive ? 'active' : <span class="status FAILED">inactive</span>}
                </td>
                <td>
                  <div class="row">
                    <button onClick={() => setEditing(fromPreset(p))} aria-label={`Edit ${p.name}`}>
                      Edit
                    </button>
                    {!p.isDefault ? (
                      <button onClick={() => void makeDefault.run(p.id)} aria-label={`Make ${p.name} the default`}>
                        Make default
                      </button>
                    ) : null}
                    <button
                      class="danger"
                      onClick={() => {
                        if (confirm(`Delete ${p.name}?`)) void remove.run(p.id);
                      }}
                      aria-label={`Delete ${p.name}`}
                    >
                      Delete
                    </button>
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </>
  );
}
