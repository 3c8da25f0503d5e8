// A job's renders, newest first: what the studio lists on the job page after a reload, and what a
// client needs to find a render it did not keep the id of.
import { notFound } from '../errors.js';
import { isId } from '../ids.js';
import type { Coordinator } from '../context.js';
import { renderStatus } from './renders.js';
import type { ListedRender } from '@shorts/common/api/renders';
import { jumpCutFlags, type EditingOptions } from '@shorts/common/options/editing';

/** At most this many renders are listed per job (the newest). */
export const RENDER_LIST_LIMIT = 100;

interface RenderListRow {
  id: string;
  shortId: number;
  createdAt: Date;
  width: number;
  height: number;
  captionPreset: string;
  brandPresetId: string | null;
  brandPresetName: string | null;
  thumbnailKey: string | null;
  editing: EditingOptions | null;
  layouts: string[] | null;
  shortSec: number | null;
}

export async function listJobRenders(
  app: Pick<Coordinator, 'db' | 'urls' | 'queue'>,
  organizationId: string,
  jobId: string,
  shortId?: number,
): Promise<ListedRender[]> {
  if (!isId(jobId)) throw notFound('Job not found');
  const job = await app.db.one<{ id: string }>(`SELECT id FROM jobs WHERE id = $1 AND organization_id = $2 AND archived_at IS NULL`, [
    jobId,
    organizationId,
  ]);
  if (!job) throw notFound('Job not found');
  const rows = await app.db.query<RenderListRow>(
    `SELECT r.id, r.short_id AS "shortId", r.created_at AS "createdAt",
            (r.spec->'output'->>'width')::int AS width, (r.spec->'output'->>'height')::int AS height, r.spec->>'captionPreset' AS "captionPreset",
            r.spec->>'brandPresetId' AS "brandPresetId", b.name AS "brandPresetName", f.thumbnail_key AS "thumbnailKey",
            r.spec->'options'->'editing' AS editing,
            (SELECT array_agg(DISTINCT seg->>'layout') FROM jsonb_array_elements(
               CASE WHEN jsonb_typeof(r.spec->'reframe'->'segments') = 'array' THEN r.spec->'reframe'->'segments' ELSE '[]'::jsonb END) seg
             WHERE seg->>'layout' IS NOT NULL) AS layouts,
            (r.spec->>'endTime')::float8 - (r.spec->>'startTime')::float8 AS "shortSec"
     FROM renders r
     LEFT JOIN brand_presets b ON b.id = r.spec->>'brandPresetId' AND b.organization_id = r.organization_id
     LEFT JOIN files f ON f.id = r.file_id
     WHERE r.organization_id = $1 AND r.job_id = $2 AND ($3::int IS NULL OR r.short_id = $3)
     ORDER BY r.created_at DESC, r.id DESC LIMIT ${RENDER_LIST_LIMIT}`,
    [organizationId, jobId, shortId ?? null],
  );
  return Promise.all(
    rows.map(async (r) => ({
      renderId: r.id,
      shortId: r.shortId,
      createdAt: r.createdAt.toISOString(),
      // `output`, not `size`: a done status's `size` is the file's bytes.
      output: { width: r.width, height: r.height },
      captionPreset: r.captionPreset,
      // The brand preset it was rendered with (its name as it is now; null when none, or since deleted).
      brandPreset: r.brandPresetId ? { id: r.brandPresetId, name: r.brandPresetName } : null,
      // How it was asked for: jump cuts on or off, the layouts its crop path takes, the short's seconds.
      jumpCuts: jumpCutFlags(r.editing),
      layouts: (r.layouts ?? []).sort(),
      ...(r.shortSec !== null ? { shortSec: Math.round(r.shortSec * 1000) / 1000 } : {}),
      // The first frame the agent stored with the render: the player's poster.
      ...(r.thumbnailKey ? { thumbnailUrl: (await app.urls.sign(r.thumbnailKey, 'GET')).url } : {}),
      // The same status a GET /api/render/:renderId gives (type, progress, url, ...).
      ...(await renderStatus(app, organizationId, r.id)),
    })),
  );
}
