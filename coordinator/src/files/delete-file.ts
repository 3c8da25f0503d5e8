import type { Coordinator } from '../coordinator.js';
import { notFound } from '../../../common/src/errors.js';
import { isId } from '../../../common/src/ids.js';
import { deleteFileRows } from './files.js';

/** A failure keeps the contract's `{id, deleted: false, error}` and, like every error body here, a `message`. */
export type DeleteOutcome = { id: string; deleted: true } | { id: string; deleted: false; error: string; message: string };

/**
 * The objects go first, inside the transaction that deletes the row: if the store fails the row
 * (and the usage it counts) stays, so the file is neither lost nor orphaned and a retry can finish.
 * A store answering "already gone" is success, which is what makes that retry work.
 */
export async function deleteFile(app: Pick<Coordinator, 'db' | 'store' | 'log'>, organizationId: string, fileId: string): Promise<DeleteOutcome> {
  if (!isId(fileId)) throw notFound('File not found');
  let storeError: unknown;
  const found = await app.db.tx(async (c) => {
    const row = (await c.query(`SELECT id FROM files WHERE organization_id = $1 AND id = $2 FOR UPDATE`, [organizationId, fileId])).rows[0];
    if (!row) return false;
    const keys = await deleteFileRows(c, organizationId, { ids: [fileId] });
    try {
      for (const key of keys) await app.store.delete(key);
    } catch (err) {
      storeError = err;
      throw err; // rolls the row back
    }
    return true;
  }).catch((err) => {
    if (storeError === undefined) throw err;
    return 'store failed' as const;
  });
  if (found === 'store failed') {
    app.log.error('file delete: object store failed, row kept', { fileId, organizationId, err: storeError });
    return { id: fileId, deleted: false, error: 'Storage deletion failed', message: 'The file could not be deleted from storage; it was kept and can be deleted again' };
  }
  if (!found) throw notFound('File not found');
  return { id: fileId, deleted: true };
}
