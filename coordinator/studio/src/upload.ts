import * as tus from 'tus-js-client';
import { ApiError, csrf, currentOrgId } from './api.js';

/** A tus upload to the coordinator; resumes a previous one of the same file (tus-js-client's fingerprint). */
export function startUpload(
  file: File,
  opts: {
    purpose?: 'job' | 'watermark';
    title?: string;
    onProgress: (sent: number, total: number) => void;
  },
): { done: Promise<{ jobId: string | null; fileId: string | null }>; abort: () => void } {
  let jobId: string | null = null;
  let fileId: string | null = null;
  let upload!: tus.Upload;
  const done = new Promise<{ jobId: string | null; fileId: string | null }>((resolve, reject) => {
    upload = new tus.Upload(file, {
      endpoint: '/api/uploads/tus',
      chunkSize: 4 * 1024 * 1024,
      // Long enough to outlast a coordinator that died mid-chunk: its writer lease on the upload
      // (UPLOAD_WRITER_LEASE_MS, 15 s) runs out, and the retry goes through another one.
      retryDelays: [0, 1000, 3000, 5000, 10000, 20000],
      metadata: {
        filename: file.name,
        filetype: file.type,
        organizationId: currentOrgId(),
        purpose: opts.purpose ?? 'job',
        ...(opts.title ? { title: opts.title } : {}),
      },
      headers: { 'X-CSRF-Token': csrf() },
      removeFingerprintOnSuccess: true,
      onProgress: opts.onProgress,
      onAfterResponse(_req, res) {
        jobId = res.getHeader('Upload-Job-Id') || jobId;
        fileId = res.getHeader('Upload-File-Id') || fileId;
      },
      onSuccess: () => resolve({ jobId, fileId }),
      onError: (err) => reject(toApiError(err)),
    });
  });
  // Without a stored fingerprint to resume from (or with storage refused), the upload starts afresh.
  upload.findPreviousUploads().then(
    (previous) => {
      if (previous[0]) upload.resumeFromPreviousUpload(previous[0]);
      upload.start();
    },
    () => upload.start(),
  );
  return {
    done,
    abort: () => {
      void upload.abort(true);
    },
  };
}

/** The API's own words from a failed tus request, not tus-js-client's wrapper text. */
function toApiError(err: Error): Error {
  const res = (err as { originalResponse?: { getStatus(): number; getBody(): string } | null }).originalResponse;
  if (!res) return err;
  try {
    const body = JSON.parse(res.getBody());
    return new ApiError(res.getStatus(), body.error ?? 'error', body.message ?? body.error ?? err.message, body);
  } catch {
    return err;
  }
}
