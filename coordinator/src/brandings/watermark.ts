import type { Coordinator } from '../context.js';
import type { Queryable } from '../db/db.js';
import { badRequest } from '../errors.js';
import type { RenderOptions } from '@shorts/common/render/options';
import { importWatermark } from './watermark-import.js';

const isOrgImage = async (c: Queryable, organizationId: string, fileId: string) =>
  (
    await c.query<{ found: number }>(`SELECT 1 AS found FROM files WHERE organization_id = $1 AND id = $2 AND type = 'image'`, [
      organizationId,
      fileId,
    ])
  ).rows.length > 0;

/**
 * Gives the preset's watermark a stored image: a resolvable `fileAppId` is kept; otherwise the
 * `waterMarkUrl` is imported, unless the preset already holds an import of that same URL (a client
 * that PUTs back what it read must not fill the library with copies).
 */
export async function resolveWatermark(
  app: Pick<Coordinator, 'db' | 'store' | 'log' | 'config'>,
  organizationId: string,
  options: RenderOptions,
  previous?: RenderOptions,
): Promise<{ options: RenderOptions; importedFileId?: string }> {
  const wm = options.waterMark;
  if (!wm) return { options };
  if (wm.fileAppId) {
    if (await isOrgImage(app.db.pool, organizationId, wm.fileAppId)) return { options };
    if (!wm.waterMarkUrl) throw badRequest('options.waterMark.fileAppId does not name an image file of this organization');
  } else if (!wm.waterMarkUrl) {
    throw badRequest('options.waterMark needs a waterMarkUrl or a fileAppId');
  }
  const url = wm.waterMarkUrl!;
  const before = previous?.waterMark;
  if (before?.fileAppId && before.waterMarkUrl === url && (await isOrgImage(app.db.pool, organizationId, before.fileAppId))) {
    return { options: { ...options, waterMark: { ...wm, fileAppId: before.fileAppId } } };
  }
  const fileId = await importWatermark(app, organizationId, url);
  return { options: { ...options, waterMark: { ...wm, fileAppId: fileId } }, importedFileId: fileId };
}
