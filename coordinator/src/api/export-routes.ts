import { z } from 'zod';
import type { Answer, Api, ApiContext } from './http.js';
import type { Coordinator } from '../context.js';
import { requireOrg } from './auth-context.js';
import { JOBS_ORG_MESSAGES } from './jobs-common.js';
import { shortCaptionsQuerySchema, type ShortCaptionsQuery } from '../captions/captions.js';

// Every export (a caption file, an editor timeline) is served twice: for a short, as a render asked
// now with the query's options would make it, and for a render, as it was asked. One pair of routes
// per file name, so the two cannot drift in their checks or their organization rules.

interface ExportRoute<Out> {
  summary: string;
  description: string;
  example: unknown;
  make: (organizationId: string, ctx: ApiContext, query: ShortCaptionsQuery) => Promise<Out>;
}

export function registerExportRoutes<R extends z.ZodType, Out>(
  api: Api,
  app: Coordinator,
  spec: {
    /** The file name both paths end in, e.g. `captions.srt`. */
    file: string;
    format: { type: string; schema: R };
    short: ExportRoute<Out>;
    render: Omit<ExportRoute<Out>, 'make'> & { make: (organizationId: string, renderId: string) => Promise<Out> };
    send: (ctx: ApiContext, out: Out) => Answer<R>;
  },
): void {
  const { file, format, short, render, send } = spec;
  api.route(
    {
      method: 'get',
      path: `/api/jobs/:jobId/shorts/:shortId/${file}`,
      tag: 'Jobs',
      summary: short.summary,
      description: short.description,
      query: shortCaptionsQuerySchema,
      response: format.schema,
      responseType: format.type,
      example: short.example,
    },
    async (ctx, { query }) => {
      const orgId = await requireOrg(app, ctx, query.organizationId, JOBS_ORG_MESSAGES);
      return send(ctx, await short.make(orgId, ctx, query));
    },
  );
  api.route(
    {
      method: 'get',
      path: `/api/render/:renderId/${file}`,
      tag: 'Render',
      summary: render.summary,
      description: render.description,
      query: z.object({ organizationId: z.string().optional() }),
      response: format.schema,
      responseType: format.type,
      example: render.example,
    },
    async (ctx, { query }) => {
      const orgId = await requireOrg(app, ctx, query.organizationId);
      return send(ctx, await render.make(orgId, ctx.params.renderId!));
    },
  );
}
