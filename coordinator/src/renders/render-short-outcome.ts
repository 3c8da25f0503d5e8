import type { Coordinator } from '../context.js';
import { insertFiles } from '../files/files.js';
import { verifyTaskObjects } from '../files/task-objects.js';
import { taskObjectPrefix } from '../tasks/task-queue.js';
import type { TypedOutcomeHandler } from '../tasks/typed-outcome.js';
import { deletePrefix } from '../storage/object-store.js';
import { chunkedLease, chunksProgress, joinedChunks, removeChunkObjects, renderChunks } from './render-chunks.js';
import type { RenderRow } from './renders.js';

// render-short (contract: common/src/tasks/render-short.ts): a render's row follows its task; a long
// render is split into render-chunk children (./render-chunks.ts).

export function createRenderShortOutcomeHandler(
  app: Pick<Coordinator, 'db' | 'urls' | 'store' | 'metrics' | 'config'>,
): TypedOutcomeHandler<'render-short'> {
  return {
    async prepareLease(task, spec) {
      const sourceUrl = (await app.urls.sign(spec.sourceObjectKey, 'GET', 6 * 3600)).url;
      const watermarkObjectUrl = spec.watermark?.objectKey ? (await app.urls.sign(spec.watermark.objectKey, 'GET', 6 * 3600)).url : null;
      return { ...spec, sourceUrl, watermarkObjectUrl, ...(await chunkedLease(app, task, spec)) };
    },

    // A long render in chunks (./render-chunks.ts): split, chunks, then the join on an agent.
    fanOut: (_c, parent, result) => renderChunks(app, parent, result),
    fanIn: (c, parent, result, chunks) => joinedChunks(c, app, parent, result, chunks.results),
    joinsOnAgent: (result) => 'split' in result,
    onChildrenProgress: chunksProgress,

    async onProgress(c, task, progress) {
      await c.query(
        `UPDATE renders SET status = 'progress', progress = GREATEST(progress, $2), updated_at = now() WHERE id = $1 AND status IN ('queued', 'progress')`,
        [task.subjectId, progress],
      );
    },

    async onComplete(c, task, result) {
      if ('split' in result) throw new Error('a split render completes with its join');
      const render = (
        await c.query<{ id: string; organizationId: string; jobId: string; status: RenderRow['status'] }>(
          `SELECT id, organization_id AS "organizationId", job_id AS "jobId", status FROM renders WHERE id = $1 FOR UPDATE`,
          [task.subjectId],
        )
      ).rows[0];
      if (!render || render.status === 'done' || render.status === 'error') return;
      const stored = await verifyTaskObjects(app.store, task, [result.objectKey, result.thumbnailKey, result.captionsKey]);
      const sizeBytes = stored.get(result.objectKey)!;
      const [fileId] = await insertFiles(c, [
        {
          organizationId: render.organizationId,
          jobId: render.jobId,
          name: `render-${render.id}.mp4`,
          type: 'video',
          contentType: result.contentType,
          sizeBytes,
          lengthSec: result.durationSec,
          objectKey: result.objectKey,
          thumbnailKey: result.thumbnailKey ?? null,
          captionsKey: result.captionsKey ?? null,
          tags: ['render'],
        },
      ]);
      await c.query(
        `UPDATE renders SET status = 'done', progress = 1, file_id = $2, size_bytes = $3, jump_cuts = $4, updated_at = now() WHERE id = $1`,
        [render.id, fileId, sizeBytes, result.jumpCuts ? JSON.stringify(result.jumpCuts) : null],
      );
    },

    async onFailed(c, task, reason, code) {
      await c.query(
        `UPDATE renders SET status = 'error', error_message = $2, error_code = $3, updated_at = now() WHERE id = $1 AND status IN ('queued', 'progress')`,
        [task.subjectId, reason, code === 'TASK_FAILED' ? 'RENDERING_ERROR' : code],
      );
    },

    async afterFinish(task, outcome) {
      app.metrics.rendersFinished.labels(outcome).inc();
      await removeChunkObjects(app, task);
      if (outcome === 'failed') await deletePrefix(app.store, taskObjectPrefix(task));
    },
  };
}
