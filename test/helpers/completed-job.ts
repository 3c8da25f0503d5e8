import type { Coordinator } from '../../coordinator/src/context.js';
import { newId } from '../../coordinator/src/ids.js';
import { insertFiles } from '../../coordinator/src/files/files.js';
import { bandOf } from '../../coordinator/src/jobs/job-views.js';
import type { Word } from '@shorts/common/text/transcript';
import type { ReframePlan } from '@shorts/common/tasks/analyze-video';
import type { Reframe, ShortDetections } from '@shorts/common/reframe/types';

/** A COMPLETED VideoShorts job whose source video sits in the store, as analyze-video leaves it. */
export async function insertCompletedJob(
  app: Coordinator,
  opts: {
    organizationId: string;
    sourcePath?: string;
    words: Word[];
    shorts: Array<{
      startTime: number;
      endTime: number;
      title?: string;
      reframe?: Reframe;
      detections?: ShortDetections;
      startId?: number;
      endId?: number;
      /** Who made the title, as analysis stores it ('model' for a language model's). */
      titleSource?: 'transcript' | 'model' | 'user';
    }>;
    width?: number;
    /** The source's frame rate as the analysis reads it (jobs analysed before it was kept have none). */
    fps?: number;
    height?: number;
    /** The source's length, which edits to the shorts are checked against. */
    durationSec?: number;
    /** With reframed shorts: what their paths were planned for. */
    reframePlan?: ReframePlan;
    /** The job's stored options (picking `topics`...). */
    options?: Record<string, unknown>;
  },
): Promise<string> {
  const id = newId();
  const sourceKey = `orgs/${opts.organizationId}/tasks/${id}/source.mp4`;
  let size = 1;
  if (opts.sourcePath) size = (await app.store.put(sourceKey, { path: opts.sourcePath })).size;
  else await app.store.put(sourceKey, Buffer.from('x'));
  const shorts = opts.shorts.map((s, i) => ({
    id: i,
    title: s.title ?? `Short ${i}`,
    ...(s.titleSource ? { titleSource: s.titleSource } : {}),
    reason: 'test',
    startId: s.startId ?? null,
    endId: s.endId ?? null,
    startTime: s.startTime,
    endTime: s.endTime,
    text: opts.words
      .filter((w) => w.start >= s.startTime && w.end <= s.endTime)
      .map((w) => w.text)
      .join(' '),
    cropObjectKey: null,
    reframe: s.reframe ?? null,
    // As analysis stores it: the caption band away from a face framed in the lower third.
    ...bandOf(s.reframe, s.detections, opts.reframePlan?.output),
  }));
  const detections = opts.shorts.some((s) => s.detections) ? JSON.stringify(opts.shorts.map((s) => s.detections ?? null)) : null;
  const data = {
    transcription: {
      language: 'en',
      text: opts.words.map((w) => w.text).join(' '),
      words: opts.words,
      backend: 'test',
      ...(opts.durationSec !== undefined ? { durationSec: opts.durationSec } : {}),
    },
    shorts,
    source: { objectKey: sourceKey, width: opts.width ?? 640, height: opts.height ?? 360, ...(opts.fps ? { fps: opts.fps } : {}) },
    ...(opts.reframePlan ? { reframePlan: opts.reframePlan } : {}),
  };
  await app.db.tx(async (c) => {
    await c.query(
      `INSERT INTO jobs (id, organization_id, function_name, title, status, progress, data, shorts_count, cost, credit_usage_status, completed_at, reframe_detections, options)
       VALUES ($1, $2, 'VideoShorts', 'fixture', 'COMPLETED', 100, $3, $4, 0.3, 'ACTIVE', now(), $5::jsonb, $6)`,
      [id, opts.organizationId, data, shorts.length, detections, opts.options ?? {}],
    );
    await insertFiles(c, [
      { organizationId: opts.organizationId, jobId: id, name: 'source.mp4', type: 'video', sizeBytes: size, objectKey: sourceKey },
    ]);
  });
  return id;
}
