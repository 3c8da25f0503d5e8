import { z } from 'zod';
import { updateShortBodySchema } from '../jobs/short-edits.js';
import { framingBodySchema } from '../jobs/framing-edits.js';
import { answer, enc, jobId, shortId, type McpTools } from './tool-common.js';

/** list_shorts, edit_short and set_framing: a job's shorts. */
export function registerShortTools(tools: McpTools): void {
  tools.server.registerTool(
    'list_shorts',
    {
      title: "List a job's shorts",
      description:
        "The shorts of a COMPLETED job (id, title as `content`, text, startTime, endTime, reframe) with `shortsRevision` (what edit_short's `revision` names) and each short's caption file links. A job not yet COMPLETED answers its status and no shorts.",
      inputSchema: z.object({ jobId }),
    },
    (args) =>
      answer(async () => {
        const job = (await tools.api.call('GET', `/api/jobs/${enc(args.jobId)}`)) as {
          status: string;
          data?: { shorts: Array<{ id: string }>; shortsRevision?: number };
        };
        const shorts = (job.data?.shorts ?? []).map((s) => ({
          ...s,
          captions: tools.captionLinks(`/api/jobs/${enc(args.jobId)}/shorts/${enc(s.id)}`),
        }));
        return { jobId: args.jobId, status: job.status, shortsRevision: job.data?.shortsRevision ?? null, shorts };
      }),
  );

  tools.server.registerTool(
    'edit_short',
    {
      title: 'Trim or rename a short',
      description:
        "PATCH /api/jobs/{jobId}/shorts/{shortId}: any of `title`, `startTime`, `endTime` (seconds on the source's clock); `revision` is list_shorts' `shortsRevision` (a stale one is refused: list again). Nothing is charged.",
      inputSchema: updateShortBodySchema.omit({ organizationId: true }).extend({ jobId, shortId }),
    },
    (args) =>
      answer(async () => {
        const { jobId: id, shortId: sid, ...body } = args;
        return (await tools.api.call('PATCH', `/api/jobs/${enc(id)}/shorts/${enc(String(sid))}`, { body })) as Record<string, unknown>;
      }),
  );

  tools.server.registerTool(
    'set_framing',
    {
      title: "Set a short's framing by hand",
      description:
        "PUT /api/jobs/{jobId}/shorts/{shortId}/framing: `overrides` replaces the short's spans framed by hand, each {start, end, kind} inside the short with `window` {x, y, width, height} (source pixels, held still), `layout` (single, split, fit, stack) or `trackId` (a face of `reframe.segments[].tracks`, followed); later spans win. `revision` is list_shorts' `shortsRevision`. Renders afterwards follow the new path; nothing is charged.",
      inputSchema: framingBodySchema.omit({ organizationId: true }).extend({ jobId, shortId }),
    },
    (args) =>
      answer(async () => {
        const { jobId: id, shortId: sid, ...body } = args;
        return (await tools.api.call('PUT', `/api/jobs/${enc(id)}/shorts/${enc(String(sid))}/framing`, { body })) as Record<
          string,
          unknown
        >;
      }),
  );
}
