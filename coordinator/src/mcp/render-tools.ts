import { z } from 'zod';
import { renderBodySchema } from '../renders/render-request.js';
import { answer, enc, idempotencyKey, jobId, keyHeader, renderId, requestBody, shortId, type McpTools } from './tool-common.js';

/** list_brand_presets, render_short, get_render, get_render_exports and get_short_captions. */
export function registerRenderTools(tools: McpTools): void {
  tools.server.registerTool(
    'list_brand_presets',
    {
      title: 'List brand presets',
      description:
        "GET /api/organizations/brandings: the organization's saved render looks (captions, watermark, size), for render_short's `brandPresetId`.",
      inputSchema: z.object({}),
    },
    () => answer(async () => ({ presets: await tools.api.call('GET', '/api/organizations/brandings') })),
  );

  tools.server.registerTool(
    'render_short',
    {
      title: 'Render a short',
      description:
        'POST /api/render: renders short `target` of COMPLETED job `id` to a captioned 9:16 MP4. Look: `brandPresetId` first, then `preset` (a caption style), then the default brand preset; `options` override field by field. Answers the renderId; follow it with get_render.',
      inputSchema: renderBodySchema.omit({ organizationId: true }).extend({ idempotencyKey }),
    },
    (args) =>
      answer(async () => {
        const created = (await tools.api.call('POST', '/api/render', {
          body: requestBody(args),
          headers: keyHeader(args.idempotencyKey),
        })) as { renderId: string };
        const base = `/api/render/${enc(created.renderId)}`;
        return { ...created, links: { status: tools.link(base), captions: tools.captionLinks(base) } };
      }),
  );

  tools.server.registerTool(
    'get_render',
    {
      title: "Get a render's status",
      description:
        'GET /api/render/{renderId}: `type` queued (queuePosition), progress (0-1), done (`url` of the MP4, size, length) or error (message, code).',
      inputSchema: z.object({ renderId }),
    },
    (args) => answer(async () => (await tools.api.call('GET', `/api/render/${enc(args.renderId)}`)) as Record<string, unknown>),
  );

  tools.server.registerTool(
    'get_render_exports',
    {
      title: "A render's files",
      description:
        "Links to a render's files: the MP4 (`video`, a signed URL, once the render is done) and its caption files `captions.srt`, `captions.vtt` and `captions.json` (the words it burns in, on the short's clock). The caption links are API routes: GET them with the same API key.",
      inputSchema: z.object({ renderId }),
    },
    (args) =>
      answer(async () => {
        const status = (await tools.api.call('GET', `/api/render/${enc(args.renderId)}`)) as Record<string, unknown>;
        const base = `/api/render/${enc(args.renderId)}`;
        return {
          renderId: args.renderId,
          type: status.type,
          video: typeof status.url === 'string' ? status.url : null,
          ...(typeof status.thumbnailUrl === 'string' ? { thumbnail: status.thumbnailUrl } : {}),
          captions: tools.captionLinks(base),
        };
      }),
  );

  tools.server.registerTool(
    'get_short_captions',
    {
      title: "A short's caption files",
      description:
        "Links to a short's caption files (SRT, WebVTT with word times, word-level JSON) as a render asked now would burn them in. API routes: GET them with the same API key. The job must be COMPLETED.",
      inputSchema: z.object({ jobId, shortId }),
    },
    (args) =>
      answer(async () => {
        const base = `/api/jobs/${enc(args.jobId)}/shorts/${enc(String(args.shortId))}`;
        // Asked once here so that a missing, unfinished or foreign job is this tool's error, not a dead link's.
        await tools.api.call('GET', `${base}/captions.json`);
        return { jobId: args.jobId, shortId: String(args.shortId), captions: tools.captionLinks(base) };
      }),
  );
}
