import { useRef } from 'preact/hooks';
import type { ShortEditResponse } from '@shorts/common/api/jobs';
import type { FramingOverride } from '@shorts/common/reframe/types';
import { api } from '../api.js';
import { useAction } from '../ui.js';

/** An edit of the job's shorts in place: PATCH, POST or DELETE under /api/jobs/:id/shorts. */
export interface ShortEdit {
  run: (
    method: 'PATCH' | 'POST' | 'DELETE',
    path: string,
    body?: Record<string, unknown>,
  ) => Promise<ShortEditResponse['short'] | undefined>;
  busy: boolean;
  error: unknown;
}

export const round1 = (t: number) => Math.round(t * 10) / 10;

/**
 * Shorts are edited in place (PATCH/POST/DELETE /api/jobs/:id/shorts): each edit names the
 * revision it was made on, taken from the last answer so quick edits need not wait for a reload.
 */
export function useShortEdits(jobId: string, shortsRevision: number | undefined, onChanged: () => void) {
  const revision = useRef(shortsRevision ?? 0);
  revision.current = Math.max(revision.current, shortsRevision ?? 0);
  const edit = useAction(async (method: 'PATCH' | 'POST' | 'DELETE', path: string, body?: Record<string, unknown>) => {
    const url = `/api/jobs/${jobId}/shorts${path}`;
    const res =
      method === 'DELETE'
        ? await api<ShortEditResponse>('DELETE', url, { query: { revision: revision.current } })
        : await api<ShortEditResponse>(method, url, { body: { ...body, revision: revision.current } });
    revision.current = res.revision;
    onChanged();
    return res.short;
  });
  // Framing by hand: the short's whole list of overrides saved at once, on the same revision chain.
  const saveFraming = useAction(async (shortId: number, overrides: FramingOverride[]) => {
    const res = await api<ShortEditResponse>('PUT', `/api/jobs/${jobId}/shorts/${shortId}/framing`, {
      body: { overrides, revision: revision.current },
    });
    revision.current = res.revision;
    onChanged();
    return res.short;
  });
  return { edit, saveFraming };
}
