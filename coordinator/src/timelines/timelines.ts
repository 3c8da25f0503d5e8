// Editor timelines of a short and of a render (docs/exports.md, "Editor timelines"), from what is
// stored, no agent asked: the cuts and cues as the caption files have them (captions.ts: the same
// words, the same jump cuts), the crop path the render follows, the source as the job knows it.
import { planWithOverrides } from '@shorts/common/reframe/overrides';
import type { Reframe } from '@shorts/common/reframe/types';
import type { RenderOptions } from '@shorts/common/render/options';
import type { RenderShortPayload } from '@shorts/common/tasks/render-short';
import type { Coordinator } from '../context.js';
import { notFound } from '../errors.js';
import { findJob, type JobRow } from '../jobs/jobs.js';
import { renderCaptions, shortCaptions, type CaptionExport, type ShortCaptionsQuery } from '../captions/captions.js';
import { buildTimeline, type Timeline } from './timeline.js';

/** The sequence a short's timeline is made for: the platform's vertical frame. */
export const SHORT_FRAME = { width: 1080, height: 1920 };

export interface TimelineExport {
  timeline: Timeline;
  fileBase: string;
}

/** A render's shape at the sequence's height (its windows are of that shape; an editor works at full size). */
export const sequenceFrame = (output: { width: number; height: number }) => ({
  width: Math.max(2, Math.round((SHORT_FRAME.height * output.width) / output.height / 2) * 2),
  height: SHORT_FRAME.height,
});

/** A short as a render asked now would cut it (the same query as its caption files). */
export async function shortTimeline(
  app: Pick<Coordinator, 'db'>,
  organizationId: string,
  jobId: string,
  shortParam: string,
  query: ShortCaptionsQuery,
): Promise<TimelineExport> {
  const captions = await shortCaptions(app, organizationId, jobId, shortParam, query);
  const job = (await findJob(app.db.pool, organizationId, jobId))!;
  const data = job.data!;
  const short = data.shorts[captions.meta.shortId]!;
  return {
    fileBase: captions.fileBase,
    timeline: assemble({
      captions,
      name: `${job.title ?? 'Job'}: ${short.title ?? `short ${captions.meta.shortId}`}`,
      job,
      output: SHORT_FRAME,
      reframe: short.reframe ?? null,
      watermark: await watermarkOf(app, organizationId, captions.options, null),
    }),
  };
}

/** A render as it was asked (its range, options, crop path) and, once done, the jump cuts it made. */
export async function renderTimeline(app: Pick<Coordinator, 'db'>, organizationId: string, renderId: string): Promise<TimelineExport> {
  const captions = await renderCaptions(app, organizationId, renderId);
  const row = await app.db.one<{ spec: RenderShortPayload }>(`SELECT spec FROM renders WHERE id = $1 AND organization_id = $2`, [
    renderId,
    organizationId,
  ]);
  const job = await findJob(app.db.pool, organizationId, captions.meta.jobId);
  if (!row || !job?.data) throw notFound('Render not found');
  const spec = row.spec;
  // The agent plans the path again when the render's director settings or shape differ (render-short.ts).
  const reframe = spec.recompute
    ? planWithOverrides(spec.recompute.detections, spec.recompute.director, spec.output, spec.recompute.overrides)
    : spec.reframe;
  const short = job.data.shorts[spec.shortId];
  return {
    fileBase: captions.fileBase,
    timeline: assemble({
      captions,
      name: `${job.title ?? 'Job'}: ${short?.title ?? `short ${spec.shortId}`} (render ${renderId.slice(0, 8)})`,
      job,
      output: sequenceFrame(spec.output),
      reframe,
      watermark: await watermarkOf(app, organizationId, spec.options, spec.watermark),
    }),
  };
}

function assemble(input: {
  captions: CaptionExport;
  name: string;
  job: JobRow;
  output: { width: number; height: number };
  reframe: Reframe | null;
  watermark: { name: string; url: string } | null;
}): Timeline {
  const { captions, job } = input;
  const data = job.data!;
  const source = sourceOf(job);
  return buildTimeline({
    name: input.name,
    fps: data.source.fps ?? null,
    width: input.output.width,
    height: input.output.height,
    source: {
      ...source,
      width: data.source.width,
      height: data.source.height,
      durationSec: data.transcription?.durationSec ?? Math.max(...data.shorts.map((s) => s.endTime)),
    },
    start: captions.meta.startTime,
    end: captions.meta.endTime,
    keep: captions.keep,
    reframe: input.reframe,
    cues: captions.track.cues.map((c) => ({ start: c.start, end: c.end, text: c.lines.join('\n') })),
    watermark: input.watermark,
  });
}

/** The source as an editor finds it: the job's file URL, else the job's `source.mp4` (its files). */
function sourceOf(job: Pick<JobRow, 'fileUrl' | 'youtubeVideoId'>): { name: string; url: string } {
  if (job.fileUrl && /^https?:\/\//i.test(job.fileUrl)) {
    return { name: fileNameOf(job.fileUrl) || 'source.mp4', url: job.fileUrl };
  }
  if (job.youtubeVideoId) return { name: `${job.youtubeVideoId}.mp4`, url: `${job.youtubeVideoId}.mp4` };
  return { name: 'source.mp4', url: 'source.mp4' };
}

/** The watermark image: the organization's image file by its name (as its files list it), or the URL. A
 *  render names what it was asked with (`stored`); a short what a render asked now would use. */
async function watermarkOf(
  app: Pick<Coordinator, 'db'>,
  organizationId: string,
  options: RenderOptions,
  stored: RenderShortPayload['watermark'] | null,
): Promise<{ name: string; url: string } | null> {
  const wm = options.waterMark;
  const file =
    stored?.objectKey || wm?.fileAppId
      ? await app.db.one<{ name: string }>(
          `SELECT name FROM files WHERE organization_id = $1 AND type = 'image' AND ${stored?.objectKey ? 'object_key' : 'id::text'} = $2`,
          [organizationId, stored?.objectKey ?? wm!.fileAppId],
        )
      : undefined;
  if (file) return { name: file.name, url: file.name };
  const url = stored?.url ?? wm?.waterMarkUrl;
  if (!url) return null;
  return { name: fileNameOf(url) || 'watermark.png', url };
}

/** The last path segment of a URL, decoded; '' when there is none or the URL does not parse. */
function fileNameOf(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
  } catch {
    return '';
  }
}
