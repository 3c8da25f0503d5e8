import { useState } from 'preact/hooks';
import type { FileView } from '@shorts/common/api/files';
import { api } from '../api.js';
import { startUpload } from '../upload.js';
import { ErrorBox, ProgressBar, useLoad } from '../ui.js';

/** A brand preset's watermark as the editor holds it: the uploaded logo's file and its CSS-like box. */
export interface DraftWatermark {
  fileAppId: string;
  left: string;
  top: string;
  width: string;
  opacity: string;
}

/** The logo's upload: its progress (null when none runs), its error, and the upload that hands the stored file's id on. */
export function useWatermarkUpload(onUploaded: (fileId: string) => void) {
  const [upload, setUpload] = useState<number | null>(null);
  const [uploadError, setUploadError] = useState<unknown>(null);
  const uploadWatermark = async (file: File) => {
    setUploadError(null);
    setUpload(0);
    try {
      const { fileId } = await startUpload(file, { purpose: 'watermark', onProgress: (s, t) => setUpload((s / Math.max(1, t)) * 100) })
        .done;
      onUploaded(fileId ?? '');
    } catch (err) {
      setUploadError(err);
    } finally {
      setUpload(null);
    }
  };
  return { upload, uploadError, uploadWatermark };
}

/** The preset editor's watermark: upload a logo, remove it, and its left, top, width and opacity. */
export function PresetWatermarkFields({
  wm,
  set,
  setWm,
  upload,
  uploadError,
  onFile,
}: {
  wm: DraftWatermark | null;
  set: (patch: { waterMark: null }) => void;
  setWm: (patch: Partial<DraftWatermark>) => void;
  upload: number | null;
  uploadError: unknown;
  onFile: (file: File) => Promise<void>;
}) {
  return (
    <fieldset>
      <legend>Watermark</legend>
      <label for="wm-file">Upload a logo (PNG, JPEG, WebP, SVG or GIF, up to 10 MB)</label>
      <input
        id="wm-file"
        type="file"
        accept="image/png,image/jpeg,image/webp,image/svg+xml,image/gif"
        onChange={(e) => {
          const f = (e.target as HTMLInputElement).files?.[0];
          if (f) void onFile(f);
        }}
      />
      {upload !== null ? <ProgressBar value={upload} label="Watermark upload progress" /> : null}
      <ErrorBox error={uploadError} />
      {wm?.fileAppId ? (
        <>
          <p class="muted">
            <WatermarkFile fileId={wm.fileAppId} />{' '}
            <button type="button" onClick={() => set({ waterMark: null })}>
              Remove watermark
            </button>
          </p>
          <div class="row">
            {WATERMARK_BOX.map(([field, label, width]) => (
              <div key={field}>
                <label for={`wm-${field}`}>{label}</label>
                <input
                  id={`wm-${field}`}
                  value={wm[field]}
                  onInput={(e) => setWm({ [field]: (e.target as HTMLInputElement).value })}
                  style={{ width }}
                />
              </div>
            ))}
          </div>
        </>
      ) : null}
    </fieldset>
  );
}

/** The watermark's box and opacity as the preset stores them (CSS lengths, an opacity 0-1). */
const WATERMARK_BOX = [
  ['left', 'Left', '90px'],
  ['top', 'Top', '90px'],
  ['width', 'Width', '90px'],
  ['opacity', 'Opacity', '70px'],
] as const;

/** The preset's uploaded logo by its file name, with a thumbnail of it (not its id). */
function WatermarkFile({ fileId }: { fileId: string }) {
  const file = useLoad(() => api<FileView>('GET', `/api/uploads/files/${fileId}`), [fileId]);
  if (file.error) return <span data-testid="watermark-file">Watermark file (no longer stored)</span>;
  if (!file.data) return <span data-testid="watermark-file">Watermark file…</span>;
  return (
    <span data-testid="watermark-file">
      <img class="thumb" src={file.data.url} alt="" data-testid="watermark-thumb" style={{ objectFit: 'contain' }} /> Watermark:{' '}
      <strong>{file.data.name}</strong>
    </span>
  );
}
