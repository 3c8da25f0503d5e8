// A long source's analysis in ranges (issue 22). The analyze-video task's first part stores and
// measures the source, stores its analysis audio, plans the transcriber's speech spans over it and
// returns `ranged`; runs of whole spans are transcribed by analyze-range child tasks, each reading
// only its samples of the stored audio; their words are joined (common/src/text/ranges.ts) and the
// task goes back to the queue for its final part on an agent:
// the shorts picked over the whole transcript, their faces found and their crops cut, as in a
// whole-file analysis. Only then do the job's rows, credits and webhook commit (analyze-video-outcome.ts).
import type { Coordinator } from '../context.js';
import type { Queryable } from '../db/db.js';
import { ANALYZE_STAGES, type AnalyzeVideoResult, type AnalyzeVideoPayload } from '@shorts/common/tasks/analyze-video';
import type { AnalyzeRangeResult } from '@shorts/common/tasks/analyze-range';
import { joinRanges, planSpanRanges } from '@shorts/common/text/ranges';
import { AppError } from '../errors.js';
import { joinWords } from '@shorts/common/text/transcript';
import { freeSlots } from '../tasks/liveness.js';
import { verifyTaskObjects } from '../files/task-objects.js';
import type { TaskRow } from '../tasks/task-queue.js';
import type { TypedChildTask, TypedTaskRow } from '../tasks/typed-outcome.js';

type RangeConfig = Pick<Coordinator['config'], 'analysisRangeMinSec'>;

/** The length from which the agent stops after storing the source; undefined: never split. */
export const rangesFromSec = (config: RangeConfig): number | undefined =>
  config.analysisRangeMinSec > 0 ? config.analysisRangeMinSec : undefined;

/** The ranges of a stored, measured source, one child each: runs of the planned speech spans. */
export async function rangeChildren(
  app: Pick<Coordinator, 'config' | 'store' | 'db'>,
  task: TypedTaskRow<'analyze-video'>,
  result: AnalyzeVideoResult,
): Promise<TypedChildTask<'analyze-range'>[]> {
  if (!result.ranged) return [];
  const plan = result.rangePlan;
  if (!plan) throw new AppError(422, 'bad_result', 'a ranged analysis came without its speech spans');
  // In order, apart and within the measured audio: then the ranges (runs up to rangeSec, each pair
  // of neighbours longer than that) number at most twice the length over rangeSec, plus one.
  const lastSample = Math.ceil((result.durationSec + 1) * plan.audio.sampleRate);
  plan.spans.forEach((span, i) => {
    const previousEnd = i === 0 ? 0 : plan.spans[i - 1]!.endSample;
    if (!(span.startSample >= previousEnd && span.endSample > span.startSample && span.endSample <= lastSample)) {
      throw new AppError(422, 'bad_result', `speech span ${i} is out of order or past the audio's end`);
    }
  });
  // The children read this audio and the final part this source: they must be the task's own.
  await verifyTaskObjects(app.store, task, [result.source.objectKey, result.source.thumbnailKey, plan.audio.objectKey]);
  const { jobId, picking } = task.payload;
  const { objectKey: audioKey, dataOffset, sampleRate } = plan.audio;
  // With free transcription slots in the farm the ranges shrink as they go, so that the slots run
  // out of work together: the job waits for its last range.
  const parallel = (await freeSlots(app, 'analyze-range', task.id)).all;
  return planSpanRanges(plan.spans, app.config.analysisRangeSec * sampleRate, parallel).map((spans) => ({
    type: 'analyze-range' as const,
    payload: { jobId, audioKey, dataOffset, sampleRate, spans, ...(picking?.language ? { language: picking.language } : {}) },
  }));
}

/** The final part's payload: the source stored by the first part and the ranges' words as one transcript. */
export function finalPartPayload(
  task: TypedTaskRow<'analyze-video'>,
  result: AnalyzeVideoResult,
  ranges: AnalyzeRangeResult[],
): AnalyzeVideoPayload {
  const words = joinRanges(ranges);
  return {
    ...task.payload,
    stitched: {
      source: result.source,
      durationSec: result.durationSec,
      downloadBytes: result.downloadBytes,
      ...(result.rangePlan ? { audioKey: result.rangePlan.audio.objectKey } : {}),
      transcript: { language: ranges[0]?.language ?? 'en', backend: ranges[0]?.backend ?? 'unknown', text: joinWords(words), words },
    },
  };
}

/** While ranges run the job is transcribing: its progress moves from that stage's value towards the
 *  next one's as the ranges finish, never back (the final part's own reports start lower). */
export async function rangesProgressed(c: Queryable, parent: TaskRow, fraction: number): Promise<void> {
  const from = ANALYZE_STAGES.transcribing.jobProgress;
  const to = ANALYZE_STAGES.generating_shorts.jobProgress - 1;
  const value = Math.floor(from + Math.max(0, Math.min(1, fraction)) * (to - from));
  await c.query(`UPDATE jobs SET progress = GREATEST(progress, $2), updated_at = now() WHERE id = $1 AND status = 'PROCESSING'`, [
    parent.subjectId,
    value,
  ]);
}
