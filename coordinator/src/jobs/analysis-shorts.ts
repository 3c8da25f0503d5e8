// An analysis's shorts reframed side by side (issue 22). An analysis that picks its shorts (a whole
// file's, or a ranged one's final part, ./analysis-ranges.ts) on a farm with free slots returns them
// unframed (`reframing`), with the analysis audio stored, and each short's stage 80 (faces, speakers,
// camera path, crop clip) runs in a reframe-short child of its own, on any free agent with a face
// detector. The last child's completion joins their crops into the shorts and completes the
// analysis with its job's rows, credits and webhook, once (./analyze-video-outcome.ts).
import type { Coordinator } from '../context.js';
import type { Queryable } from '../db/db.js';
import { AppError } from '../errors.js';
import { ANALYZE_STAGES, type AnalyzeVideoResult } from '@shorts/common/tasks/analyze-video';
import type { ReframeShortResult } from '@shorts/common/tasks/reframe-short';
import { verifyTaskObjects } from '../files/task-objects.js';
import type { TaskRow } from '../tasks/task-queue.js';
import { childrenOf } from '../tasks/task-lookups.js';
import type { TypedChildTask, TypedTaskRow } from '../tasks/typed-outcome.js';

type App = Pick<Coordinator, 'store'>;

/** One reframe-short child per picked short, reading the source and audio the task stored. */
export async function shortChildren(
  app: App,
  task: TypedTaskRow<'analyze-video'>,
  result: AnalyzeVideoResult,
): Promise<TypedChildTask<'reframe-short'>[]> {
  if (!result.reframing) return [];
  const { audio } = result.reframing;
  if (!result.reframePlan) throw new AppError(422, 'bad_result', 'shorts to reframe came without the plan they are framed for');
  // The children read this audio and this source: they must be the task's own.
  await verifyTaskObjects(app.store, task, [result.source.objectKey, audio.objectKey]);
  const { jobId } = task.payload;
  return result.shorts.map((short, index) => ({
    type: 'reframe-short' as const,
    payload: {
      jobId,
      index,
      start: short.startTime,
      end: short.endTime,
      source: {
        objectKey: result.source.objectKey,
        width: result.source.width,
        height: result.source.height,
        audioStream: result.source.audioStream ?? null,
      },
      audio,
      reframePlan: result.reframePlan!,
    },
  }));
}

/** The children of the reframing round, in the shorts' order. */
const reframeChildrenOf = (c: Queryable, parent: Pick<TaskRow, 'id'>) => childrenOf(c, parent.id, 'reframe-short');

/** Fan-in: each short with its own child's crop, path and detections. The result is the analysis's
 *  as a whole-file run makes it; onComplete, in the same transaction, checks each crop to be its
 *  child's (verifyAnalysisObjects) as it reads the stored sizes. */
export async function joinReframedShorts(
  c: Queryable,
  parent: TaskRow,
  result: AnalyzeVideoResult,
  reframed: ReframeShortResult[],
): Promise<AnalyzeVideoResult> {
  if (!result.reframing) throw new AppError(422, 'bad_result', 'only shorts left to reframe have reframed shorts to join');
  const children = await reframeChildrenOf(c, parent);
  if (children.length !== result.shorts.length || reframed.length !== result.shorts.length)
    throw new AppError(422, 'bad_result', `${result.shorts.length} shorts, but ${reframed.length} reframed`);
  const { reframing: _done, ...rest } = result;
  return { ...rest, shorts: result.shorts.map((short, i) => ({ ...short, ...reframed[i]! })) };
}

/**
 * The stored size of each object a completed analysis names, each checked to be its task's own: the
 * source is the analysis's, a crop is the analysis's or, when its shorts were reframed in children,
 * its short's child's.
 */
export async function verifyAnalysisObjects(
  c: Queryable,
  app: App,
  task: TaskRow,
  result: AnalyzeVideoResult,
): Promise<Map<string, number>> {
  const children = await reframeChildrenOf(c, task);
  const cropKeys = (s: AnalyzeVideoResult['shorts'][number]) => (s.crop ? [s.crop.objectKey, s.crop.thumbnailKey] : []);
  const sizes = await verifyTaskObjects(app.store, task, [
    result.source.objectKey,
    result.source.thumbnailKey,
    ...(children.length ? [] : result.shorts.flatMap(cropKeys)),
  ]);
  if (children.length) {
    if (children.length !== result.shorts.length) throw new AppError(422, 'bad_result', 'a short has no reframing of its own');
    for (const [i, child] of children.entries()) {
      for (const [key, size] of await verifyTaskObjects(app.store, child, cropKeys(result.shorts[i]!))) sizes.set(key, size);
    }
  }
  return sizes;
}

/** While the shorts are reframed the job is detecting speakers: its progress moves from that
 *  stage's value towards 100 as the children go, never back. */
export async function shortsProgressed(c: Queryable, parent: TaskRow, fraction: number): Promise<void> {
  const from = ANALYZE_STAGES.detecting_speakers.jobProgress;
  const value = Math.floor(from + Math.max(0, Math.min(1, fraction)) * (99 - from));
  await c.query(`UPDATE jobs SET progress = GREATEST(progress, $2), updated_at = now() WHERE id = $1 AND status = 'PROCESSING'`, [
    parent.subjectId,
    value,
  ]);
}
