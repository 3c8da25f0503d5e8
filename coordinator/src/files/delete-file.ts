import type { Coordinator } from '../context.js';
import { notFound } from '../errors.js';
import { isId } from '../ids.js';
import { deleteFileRows } from './files.js';

/** A failure keeps the contract's `{id, deleted: false, error}` and, like every error body here, a `message`. */
export type DeleteOutcome = { id: string; deleted: true } | { id: string; deleted: false; error: string; message: string };

/**
 * The row (and the usage it counts) goes first; the objects only once that has committed. A commit
 * that fails leaves row and objects as they were. A store that fails after the commit leaves objects
 * no row knows, which the daily orphan sweep removes; the file itself is gone either way.
 */
export async function deleteFile(
  app: Pick<Coordinator, 'db' | 'store' | 'log'>,
  organizationId: string,
  fileId: string,
): Promise<DeleteOutcome> {
  if (!isId(fileId)) throw notFound('File not found');
  const keys = await app.db.tx(async (c) => {
    const row = (
      await c.query<{ id: string }>(`SELECT id FROM files WHERE organization_id = $1 AND id = $2 FOR UPDATE`, [organizationId, fileId])
    ).rows[0];
    if (!row) return undefined;
    return deleteFileRows(c, organizationId, { ids: [fileId] });
  });
  if (!keys) throw notFound('File not found');
  for (const key of keys) {
    await app.store.delete(key).catch((err) => {
      app.log.error('file delete: object left for the orphan sweep', { fileId, organizationId, key, err });
    });
  }
  return { id: fileId, deleted: true };
}
