// A long render on several agents at once (issue 22). The render's task goes to one agent, which
// plans frame-exact cuts (`split`); each cut becomes a render-chunk child that renders the video of
// its stretch (the first one also the sound of the whole render); when the last is done the render's task
// is queued again and an agent joins the chunks with the sound, without re-encoding (`join`).
// The queue's fan-out (tasks/fan-out.ts) keeps it exactly-once: the render completes, and its file
// is stored, once, with the join's result.
import type { Coordinator } from '../context.js';
import type { Queryable } from '../db/db.js';
import { AppError } from '../errors.js';
import type { TaskLeasePayload, TaskResult } from '@shorts/common/tasks/contracts';
import type { TaskType } from '@shorts/common/tasks';
import { stageProgress } from '@shorts/common/tasks/contract';
import { renderChunkOutputs } from '@shorts/common/tasks/render-chunk';
import { RENDER_STAGES, renderShortOutputs, type RenderShortPayload, type RenderSplit } from '@shorts/common/tasks/render-short';
import { deleteChildrenObjects, verifyTaskObjects } from '../files/task-objects.js';
import { freeAgents, slotsOf } from '../tasks/liveness.js';
import { chunkSpeeds, renderSpeeds } from './render-speeds.js';
import { taskObjectKey, type TaskRow } from '../tasks/task-queue.js';
import { childrenOf } from '../tasks/task-lookups.js';
import type { TypedChildTask, TypedTaskRow } from '../tasks/typed-outcome.js';

type App = Pick<Coordinator, 'db' | 'urls' | 'store' | 'config'>;
type SplitLease = Pick<TaskLeasePayload<'render-short'>, 'split' | 'join'>;
type RenderTask = TypedTaskRow<'render-short'>;

const signed = async (app: App, key: string) => (await app.urls.sign(key, 'GET', 6 * 3600)).url;

/**
 * What the render's task is asked to do when an agent takes it: join the chunks (its children are
 * done), split (a long render and a farm with two free slots or more: as many chunks as free slots,
 * no shorter than RENDER_CHUNK_SEC each), or the whole render in one pass. With one free slot (the
 * render's own) it is never split: it does not wait for a second agent.
 */
export async function chunkedLease(app: App, task: TaskRow, spec: RenderShortPayload): Promise<SplitLease> {
  const joined = (task.result as { split?: RenderSplit } | null)?.split;
  if (joined?.chunks) {
    return {
      join: {
        audioUrl: joined.audio ? await signed(app, joined.audio.objectKey) : null,
        chunkUrls: await Promise.all(joined.chunks.map((c) => signed(app, c.objectKey))),
        audioObjectKey: joined.audio?.objectKey ?? null,
        chunkObjectKeys: joined.chunks.map((c) => c.objectKey),
        jumpCuts: joined.jumpCuts ?? null,
        captionsKey: joined.captionsKey ?? null,
      },
    };
  }
  const lengthSec = spec.endTime - spec.startTime;
  const { renderChunkMinSec, renderChunkSec } = app.config;
  // Jump cuts are split too (the agent counts the kept frames); the length here is the source's, an
  // upper bound of the edited one.
  if (!(renderChunkMinSec > 0) || lengthSec < renderChunkMinSec) return {};
  const byLength = Math.floor(lengthSec / renderChunkSec);
  const agents = await freeAgents(app, 'render-chunk', task.id);
  // Every chunk of a render is encoded alike: on NVENC hosts only when two or more have a free slot.
  const nvencAgents = agents.filter((a) => a.nvenc);
  const encoder = slotsOf(nvencAgents) >= 2 ? 'h264_nvenc' : 'libx264';
  const takers = encoder === 'h264_nvenc' ? nvencAgents : agents;
  const chunks = Math.min(byLength, slotsOf(takers));
  if (chunks < 2) return {};
  // A faster host gets more of the video (./render-speeds.ts).
  const splitter = app.config.renderChunkBySpeed ? task.leasedBy : null;
  const speeds = splitter
    ? chunkSpeeds(splitter, takers, chunks, await renderSpeeds(app.db, [...new Set([splitter, ...takers.map((a) => a.id)])], encoder))
    : undefined;
  return { split: { chunks, encoder, ...(speeds ? { speeds } : {}) } };
}

/** The chunks a split render fans out into (none for a render done in one pass or joined). */
export async function renderChunks(
  app: App,
  parent: RenderTask,
  result: TaskResult<'render-short'>,
): Promise<TypedChildTask<'render-chunk'>[]> {
  if (!('split' in result) || result.split.chunks) return [];
  const { audio, hasSound, cuts, encoder, gopFrames } = result.split;
  const spec = parent.payload;
  if (audio) {
    await verifyTaskObjects(app.store, parent, [audio.objectKey]);
    if (audio.objectKey !== taskObjectKey(parent, renderShortOutputs.audio(spec.renderId)))
      throw new AppError(422, 'bad_result', "the render's sound has another name");
  }
  return cuts.map((cut, index) => ({
    type: 'render-chunk' as const,
    payload: {
      ...spec,
      chunk: { ...cut, index, last: index === cuts.length - 1, encoder, gopFrames, encodesSound: index === 0 && hasSound === true },
    },
    placement: encoder === 'h264_nvenc' ? { requires: ['nvenc'] } : undefined,
  }));
}

/** Fan-in: the chunks, in order, each checked to be its own child's, for the join. */
export async function joinedChunks(
  c: Queryable,
  app: App,
  parent: RenderTask,
  result: TaskResult<'render-short'>,
  chunks: TaskResult<'render-chunk'>[],
): Promise<TaskResult<'render-short'>> {
  if (!('split' in result)) throw new Error('only a split render has chunks to join');
  const children = await childrenOf(c, parent.id);
  const spec = parent.payload;
  let audio = result.split.audio;
  for (const [i, child] of children.entries()) {
    const chunk = chunks[i]!;
    await verifyTaskObjects(app.store, child, [chunk.objectKey, ...(chunk.audio ? [chunk.audio.objectKey] : [])]);
    if (!chunk.audio) continue;
    // The sound comes from the chunk that was asked for it, under its one name.
    if (i !== 0 || !result.split.hasSound || chunk.audio.objectKey !== taskObjectKey(child, renderChunkOutputs.sound(spec.renderId))) {
      throw new AppError(422, 'bad_result', 'a chunk returned a sound it was not asked for');
    }
    audio = chunk.audio;
  }
  if (result.split.hasSound && !audio) throw new AppError(422, 'bad_result', "the render's sound is missing from its first chunk");
  return { split: { ...result.split, audio, chunks: chunks.map((r) => ({ objectKey: r.objectKey, frames: r.frames })) } };
}

/** While the chunks render, the render's progress is theirs (over the `rendering` stage). */
export async function chunksProgress(c: Queryable, parent: TaskRow, _childType: TaskType, fraction: number): Promise<number> {
  const progress = stageProgress(RENDER_STAGES, 'rendering', fraction);
  await c.query(
    `UPDATE renders SET status = 'progress', progress = GREATEST(progress, $2), updated_at = now() WHERE id = $1 AND status IN ('queued', 'progress')`,
    [parent.subjectId, progress],
  );
  return progress;
}

/** The chunks and the sound are the join's inputs only: gone once the render has ended. */
export async function removeChunkObjects(app: App, task: RenderTask): Promise<void> {
  await deleteChildrenObjects(app, task);
  await app.store.delete(taskObjectKey(task, renderShortOutputs.audio(task.payload.renderId))).catch(() => undefined);
}
