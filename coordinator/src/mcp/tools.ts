import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { createJobSchema } from '../jobs/job-input.js';
import { renderBodySchema } from '../renders/render-request.js';
import { updateShortBodySchema } from '../jobs/short-edits.js';
import { framingBodySchema } from '../jobs/framing-edits.js';
import { publishSchema } from '../social/publish-input.js';
import { ApiCallError, type ApiClient } from './api-client.js';

// MCP tools over the REST API (docs/mcp.md). Each tool takes the route's own zod schema (less
// `organizationId`: an API key names its organization) and makes the same REST request with the
// caller's credentials, so its answer, scoping and errors are the API's. Results carry links, never bytes.

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** The longest one wait_for_job call blocks; a client wanting longer calls it again. */
export const MAX_WAIT_SEC = 600;
const DEFAULT_WAIT_SEC = 120;

export interface McpToolOptions {
  /** How often wait_for_job reads the job (tests shorten it). */
  pollMs?: number;
}

const jobId = z.string().min(1).describe('The job id (`id` from create_job)');
const renderId = z.string().min(1).describe('The render id (`renderId` from render_short)');
const shortId = z
  .union([z.string(), z.number().int().min(0)])
  .describe('The short\'s id in its job (`data.shorts[].id`: its position, "0" or 0)');
const idempotencyKey = z
  .string()
  .min(1)
  .max(255)
  .optional()
  .describe('Sent as the Idempotency-Key header: a retry with the same key and input does the work once (docs/api.md, "Idempotency")');

const FORMATS = ['srt', 'vtt', 'json'] as const;
const enc = encodeURIComponent;

function ok(result: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(result, null, 2) }], structuredContent: result };
}

/** An API refusal as a tool error: the answer's status, `error`, `message` and `code`. */
function apiError(err: ApiCallError): CallToolResult {
  const body = { status: err.status, error: err.error, message: err.message, code: err.code, ...err.body };
  return {
    isError: true,
    content: [{ type: 'text', text: `${err.status} ${err.error}: ${err.message} (code ${err.code})` }],
    structuredContent: body,
  };
}

async function answer(run: () => Promise<Record<string, unknown>>): Promise<CallToolResult> {
  try {
    return ok(await run());
  } catch (err) {
    if (err instanceof ApiCallError) return apiError(err);
    throw err;
  }
}

/** A tool's arguments as the request body: the Idempotency-Key travels as its header. */
const requestBody = <T extends Record<string, unknown>>(args: T): Omit<T, 'idempotencyKey'> => {
  const { idempotencyKey: _ignored, ...rest } = args;
  return rest;
};
const keyHeader = (key: string | undefined): Record<string, string> => (key ? { 'idempotency-key': key } : {});

/** An MCP server whose tools call `api` (one per caller: the client carries the caller's credentials). */
export function createMcpServer(api: ApiClient, opts: McpToolOptions = {}): McpServer {
  const server = new McpServer({ name: 'shorts-render-cluster', version: '0.1.0' });
  const pollMs = opts.pollMs ?? 1000;
  const link = (path: string) => api.publicUrl + path;
  const captionLinks = (base: string) => Object.fromEntries(FORMATS.map((f) => [f, link(`${base}/captions.${f}`)]));

  server.registerTool(
    'create_job',
    {
      title: 'Create a shorts job',
      description:
        'POST /api/jobs: analyse a video (a YouTube id or URL in `youtubeVideoId`, a public video URL in `fileUrl`, or `sourceJobId`) into shorts, picked automatically or given in `options.predefinedShorts`. `functionName` is always "VideoShorts". Credits are reserved now. Answers the job id; follow it with wait_for_job.',
      inputSchema: createJobSchema.omit({ organizationId: true }).extend({ idempotencyKey }),
    },
    (args) =>
      answer(async () => {
        const created = (await api.call('POST', '/api/jobs', { body: requestBody(args), headers: keyHeader(args.idempotencyKey) })) as {
          id: string;
        };
        return { ...created, links: { job: link(`/api/jobs/${enc(created.id)}`) } };
      }),
  );

  server.registerTool(
    'get_job',
    {
      title: 'Get a job',
      description:
        'GET /api/jobs/{jobId}: status (PROCESSING, COMPLETED, FAILED), progress (5, 15, 30, 60, 80, 100), `stage`, and once COMPLETED its shorts, cost and `shortsRevision`.',
      inputSchema: z.object({ jobId }),
    },
    (args) => answer(async () => (await api.call('GET', `/api/jobs/${enc(args.jobId)}`)) as Record<string, unknown>),
  );

  server.registerTool(
    'wait_for_job',
    {
      title: 'Wait for a job to finish',
      description: `Reads the job until it is COMPLETED or FAILED, at most \`timeoutSec\` (default ${DEFAULT_WAIT_SEC}, at most ${MAX_WAIT_SEC}), sending MCP progress notifications (progress out of 100, the stage as message) when the call carries a progressToken. Answers the job as get_job does, with \`settled\`: false when the time ran out first (call it again).`,
      inputSchema: z.object({
        jobId,
        timeoutSec: z.number().int().min(1).max(MAX_WAIT_SEC).optional().describe(`Default ${DEFAULT_WAIT_SEC}`),
      }),
    },
    (args, extra) => answer(() => waitForJob(args.jobId, (args.timeoutSec ?? DEFAULT_WAIT_SEC) * 1000, extra)),
  );

  async function waitForJob(id: string, timeoutMs: number, extra: Extra): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    const token = extra._meta?.progressToken;
    // MCP wants each notification's progress above the last: a new stage message at the same value waits.
    let lastSent = -1;
    for (;;) {
      const job = (await api.call('GET', `/api/jobs/${enc(id)}`)) as Record<string, unknown>;
      const progress = typeof job.progress === 'number' ? job.progress : 0;
      const message = typeof job.stage === 'string' ? job.stage : String(job.status);
      if (token !== undefined && progress > lastSent) {
        lastSent = progress;
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, total: 100, message } });
      }
      const settled = job.status === 'COMPLETED' || job.status === 'FAILED';
      const left = deadline - Date.now();
      if (settled || left <= 0 || extra.signal.aborted) return { ...job, settled };
      await new Promise((resolve) => setTimeout(resolve, Math.min(pollMs, left)));
    }
  }

  server.registerTool(
    'list_shorts',
    {
      title: "List a job's shorts",
      description:
        "The shorts of a COMPLETED job (id, title as `content`, text, startTime, endTime, reframe) with `shortsRevision` (what edit_short's `revision` names) and each short's caption file links. A job not yet COMPLETED answers its status and no shorts.",
      inputSchema: z.object({ jobId }),
    },
    (args) =>
      answer(async () => {
        const job = (await api.call('GET', `/api/jobs/${enc(args.jobId)}`)) as {
          status: string;
          data?: { shorts: Array<{ id: string }>; shortsRevision?: number };
        };
        const shorts = (job.data?.shorts ?? []).map((s) => ({
          ...s,
          captions: captionLinks(`/api/jobs/${enc(args.jobId)}/shorts/${enc(s.id)}`),
        }));
        return { jobId: args.jobId, status: job.status, shortsRevision: job.data?.shortsRevision ?? null, shorts };
      }),
  );

  server.registerTool(
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
        return (await api.call('PATCH', `/api/jobs/${enc(id)}/shorts/${enc(String(sid))}`, { body })) as Record<string, unknown>;
      }),
  );

  server.registerTool(
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
        return (await api.call('PUT', `/api/jobs/${enc(id)}/shorts/${enc(String(sid))}/framing`, { body })) as Record<string, unknown>;
      }),
  );

  server.registerTool(
    'list_brand_presets',
    {
      title: 'List brand presets',
      description:
        "GET /api/organizations/brandings: the organization's saved render looks (captions, watermark, size), for render_short's `brandPresetId`.",
      inputSchema: z.object({}),
    },
    () => answer(async () => ({ presets: await api.call('GET', '/api/organizations/brandings') })),
  );

  server.registerTool(
    'render_short',
    {
      title: 'Render a short',
      description:
        'POST /api/render: renders short `target` of COMPLETED job `id` to a captioned 9:16 MP4. Look: `brandPresetId` first, then `preset` (a caption style), then the default brand preset; `options` override field by field. Answers the renderId; follow it with get_render.',
      inputSchema: renderBodySchema.omit({ organizationId: true }).extend({ idempotencyKey }),
    },
    (args) =>
      answer(async () => {
        const created = (await api.call('POST', '/api/render', { body: requestBody(args), headers: keyHeader(args.idempotencyKey) })) as {
          renderId: string;
        };
        const base = `/api/render/${enc(created.renderId)}`;
        return { ...created, links: { status: link(base), captions: captionLinks(base) } };
      }),
  );

  server.registerTool(
    'get_render',
    {
      title: "Get a render's status",
      description:
        'GET /api/render/{renderId}: `type` queued (queuePosition), progress (0-1), done (`url` of the MP4, size, length) or error (message, code).',
      inputSchema: z.object({ renderId }),
    },
    (args) => answer(async () => (await api.call('GET', `/api/render/${enc(args.renderId)}`)) as Record<string, unknown>),
  );

  server.registerTool(
    'get_render_exports',
    {
      title: "A render's files",
      description:
        "Links to a render's files: the MP4 (`video`, a signed URL, once the render is done) and its caption files `captions.srt`, `captions.vtt` and `captions.json` (the words it burns in, on the short's clock). The caption links are API routes: GET them with the same API key.",
      inputSchema: z.object({ renderId }),
    },
    (args) =>
      answer(async () => {
        const status = (await api.call('GET', `/api/render/${enc(args.renderId)}`)) as Record<string, unknown>;
        const base = `/api/render/${enc(args.renderId)}`;
        return {
          renderId: args.renderId,
          type: status.type,
          video: typeof status.url === 'string' ? status.url : null,
          ...(typeof status.thumbnailUrl === 'string' ? { thumbnail: status.thumbnailUrl } : {}),
          captions: captionLinks(base),
        };
      }),
  );

  server.registerTool(
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
        await api.call('GET', `${base}/captions.json`);
        return { jobId: args.jobId, shortId: String(args.shortId), captions: captionLinks(base) };
      }),
  );

  server.registerTool(
    'post_to_social',
    {
      title: 'Post to social networks',
      description:
        "POST /api/organizations/social-posts/publish (Pro and Business plans): a `video` post of a render (`fileId`: a render's file id, or `videoUrl`: an https URL) to `platforms` with `caption`, now (`publish_now`), at `scheduledAt` (`schedule`), in the next queue slot (`next_slot`) or as a `draft`.",
      inputSchema: publishSchema.omit({ organizationId: true }).extend({ idempotencyKey }),
    },
    (args) =>
      answer(
        async () =>
          (await api.call('POST', '/api/organizations/social-posts/publish', {
            body: requestBody(args),
            headers: keyHeader(args.idempotencyKey),
          })) as Record<string, unknown>,
      ),
  );

  return server;
}
