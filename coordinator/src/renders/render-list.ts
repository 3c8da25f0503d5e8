// A job's renders, newest first: what the studio lists on the job page after a reload, and what a
// client needs to find a render it did not keep the id of.
import { notFound } from '../../../common/src/errors.js';
import { isId } from '../../../common/src/ids.js';
import type { Coordinator } from '../coordinator.js';
import { renderStatus } from './renders.js';

/** At most this many renders are listed per job (the newest). */
export const RENDER_LIST_LIMIT = 100;

interface RenderListRow {
  id: string;
  shortId: number;
  createdAt: Date;
  width: number;
  height: number;
  captionPreset: string;
}

export async function listJobRenders(
  app: Pick<Coordinator, 'db' | 'urls' | 'queue'>, organizationId: string, jobId: string, shortId?: number,
): Promise<Array<Record<string, unknown>>> {
  if (!isId(jobId)) throw notFound('Job not found');
  const job = await app.db.one<{ id: string }>(`SELECT id FROM jobs WHERE id = $1 AND organization_id = $2 AND archived_at IS NULL`, [jobId, organizationId]);
  if (!job) throw notFound('Job not found');
  const rows = await app.db.query<RenderListRow>(
    `SELECT id, short_id AS "shortId", created_at AS "createdAt",
            (spec->'output'->>'width')::int AS width, (spec->'output'->>'height')::int AS height, spec->>'captionPreset' AS "captionPreset"
     FROM renders WHERE organization_id = $1 AND job_id = $2 AND ($3::int IS NULL OR short_id = $3)
     ORDER BY created_at DESC, id DESC LIMIT ${RENDER_LIST_LIMIT}`,
    [organizationId, jobId, shortId ?? null],
  );
  return Promise.all(rows.map(async (r) => ({
    renderId: r.id,
    shortId: r.shortId,
    createdAt: r.createdAt.toISOString(),
    // `output`, not `size`: a done status's `size` is the file's bytes.
    output: { width: r.width, height: r.height },
    captionPreset: r.captionPreset,
    // The same status a GET /api/render/:renderId gives (type, progress, url, ...).
    ...(await renderStatus(app, organizationId, r.id)),
  })));
}
