// Caption files of a short and of a render, computed here from what is stored (no agent asked):
// the transcript's words (the corrected ones, transcript-edits.ts), the short's range, and the jump
// cuts a render plans (common/src/render/jump-cuts.ts, on the source's frame rate and the voice
// activity analysis stored), all on the short's own clock. The formats are caption-files.ts.
import { z } from 'zod';
import { captionedWords, type CaptionWord } from '@shorts/common/render/caption-pages';
import { editedDuration, planJumpCuts, type JumpCutPlan } from '@shorts/common/render/jump-cuts';
import type { RenderOptions } from '@shorts/common/render/options';
import { cutsAnything, cutsSilences, editingFromQuery, editingQueryFields, type EditingOptions } from '@shorts/common/options/editing';
import type { RenderShortPayload } from '@shorts/common/tasks/render-short';
import type { Coordinator } from '../context.js';
import { conflict, notFound } from '../errors.js';
import { isId } from '../ids.js';
import { findJob, JOB_STATUS } from '../jobs/jobs.js';
import { findPreset, storedSpeech } from '../renders/renders.js';
import { PLATFORM_DEFAULT_OPTIONS, resolveRender } from '../renders/render-request.js';
import { requireOrganization } from '../tenancy/tenancy.js';
import { buildCaptionTrack, type CaptionJsonMeta, type CaptionTrack } from './caption-files.js';

export interface CaptionExport {
  track: CaptionTrack;
  meta: CaptionJsonMeta;
  /** The download's file name without its extension. */
  fileBase: string;
  /** What a render keeps of the short (source clock) when it makes jump cuts; null when it cuts nothing. */
  keep: Array<{ start: number; end: number }> | null;
  /** The render options these captions follow (the resolved ones of a short, a render's own). */
  options: RenderOptions;
}

/** A short's captions as a render asked now would burn them in: the organization's default brand
 *  preset (or `brandPresetId`) and the platform defaults, then these, as a render's options would. */
export const shortCaptionsQuerySchema = z.object({
  organizationId: z.string().optional(),
  brandPresetId: z.string().optional().describe("A brand preset whose maxWordsInPage and editing apply (else the organization's default)"),
  maxWordsInPage: z.coerce.number().int().min(1).max(50).optional().describe('Words per caption (default 4, or the preset’s)'),
  ...editingQueryFields,
});
export type ShortCaptionsQuery = z.output<typeof shortCaptionsQuerySchema>;

/** Captions of one short of a completed job; another organization's job is 404 like a missing one. */
export async function shortCaptions(
  app: Pick<Coordinator, 'db'>,
  organizationId: string,
  jobId: string,
  shortParam: string,
  query: ShortCaptionsQuery,
): Promise<CaptionExport> {
  const job = await findJob(app.db.pool, organizationId, jobId);
  if (!job) throw notFound('Job not found');
  if (job.status !== JOB_STATUS.completed || !job.data?.transcription) throw conflict('Captions exist once the job has COMPLETED');
  const data = job.data;
  const shortId = /^\d+$/.test(shortParam) ? Number(shortParam) : NaN;
  const short = data.shorts[shortId];
  if (!short || short.removed) throw notFound(`Short ${shortParam} not found in this job`);

  const org = await requireOrganization(app.db.pool, organizationId);
  const options: Record<string, unknown> = {};
  if (query.maxWordsInPage !== undefined) options.maxWordsInPage = query.maxWordsInPage;
  const asked = editingFromQuery(query);
  if (asked) options.editing = asked;
  const resolved = resolveRender({
    body: { id: job.id, target: shortId, brandPresetId: query.brandPresetId, options },
    plan: org.plan,
    explicitPreset: query.brandPresetId ? await findPreset(app.db.pool, organizationId, { id: query.brandPresetId }) : undefined,
    defaultPreset: await findPreset(app.db.pool, organizationId, { isDefault: true }),
  });
  const words = data.transcription.words.filter((w) => w.end > short.startTime && w.start < short.endTime);
  const speech = cutsSilences(resolved.options.editing) ? ((await storedSpeech(app.db.pool, job.id, shortId)) ?? null) : null;
  return assemble({
    options: resolved.options,
    jobId: job.id,
    shortId,
    startTime: short.startTime,
    endTime: short.endTime,
    words,
    editing: resolved.options.editing,
    speech,
    fps: data.source.fps ?? null,
    maxWordsInPage: resolved.options.maxWordsInPage ?? PLATFORM_DEFAULT_OPTIONS.maxWordsInPage,
    fileBase: `${slug(job.title) || 'job'}-short-${shortId}`,
  });
}

/** Captions of a render: the words, range and options it was asked with (its stored spec), and once
 *  it is done the jump cuts its agent reports it made, so what it burned in; another organization's
 *  render is 404 like a missing one. */
export async function renderCaptions(app: Pick<Coordinator, 'db'>, organizationId: string, renderId: string): Promise<CaptionExport> {
  if (!isId(renderId)) throw notFound('Render not found');
  const row = await app.db.one<{ spec: RenderShortPayload; fps: number | null; jumpCuts: JumpCutPlan | null }>(
    `SELECT r.spec, (j.data -> 'source' ->> 'fps')::float8 AS fps, r.jump_cuts AS "jumpCuts"
     FROM renders r JOIN jobs j ON j.id = r.job_id
     WHERE r.id = $1 AND r.organization_id = $2`,
    [renderId, organizationId],
  );
  if (!row) throw notFound('Render not found');
  const spec = row.spec;
  return assemble({
    options: spec.options,
    jobId: spec.jobId,
    shortId: spec.shortId,
    renderId,
    startTime: spec.startTime,
    endTime: spec.endTime,
    words: spec.words,
    editing: spec.options.editing,
    speech: spec.speech ?? null,
    fps: row.fps,
    made: row.jumpCuts,
    maxWordsInPage: spec.options.maxWordsInPage ?? PLATFORM_DEFAULT_OPTIONS.maxWordsInPage,
    fileBase: `render-${renderId}`,
  });
}

function assemble(input: {
  options: RenderOptions;
  jobId: string;
  shortId: number;
  renderId?: string;
  startTime: number;
  endTime: number;
  words: CaptionWord[];
  editing: EditingOptions | undefined;
  speech: Array<{ start: number; end: number }> | null;
  fps: number | null;
  /** The cuts a finished render reports it made: they win over planning again. */
  made?: JumpCutPlan | null;
  maxWordsInPage: number;
  fileBase: string;
}): CaptionExport {
  const { startTime: start, endTime: end } = input;
  // Else the render's own plan (node-agent render-short.ts), on the same inputs.
  const plan: JumpCutPlan | null =
    input.made ??
    (cutsAnything(input.editing)
      ? planJumpCuts({ start, end, words: input.words, speech: input.speech, editing: input.editing, fps: input.fps })
      : null);
  const cut = plan?.cuts.length ? plan : null;
  const track = buildCaptionTrack(captionedWords(input.words, start, end, cut), input.maxWordsInPage);
  return {
    track,
    fileBase: input.fileBase,
    options: input.options,
    keep: cut ? cut.keep.map((k) => ({ start: k.start, end: k.end })) : null,
    meta: {
      jobId: input.jobId,
      shortId: input.shortId,
      ...(input.renderId ? { renderId: input.renderId } : {}),
      startTime: start,
      endTime: end,
      durationSec: round3(cut ? editedDuration(cut) : end - start),
      maxWordsInPage: input.maxWordsInPage,
      jumpCuts: (cut?.cuts ?? []).map((c) => ({ start: round3(c.start), end: round3(c.end), reason: c.reason })),
    },
  };
}

/** A file name part from a title: ASCII letters, digits and dashes only. */
const slug = (title: string | null) =>
  (title ?? '')
    .normalize('NFKD')
    .replace(/[^\w\s-]/g, '')
    .trim()
    .replace(/[\s_]+/g, '-')
    .slice(0, 60)
    .toLowerCase();
const round3 = (v: number) => Math.round(v * 1000) / 1000;
