import type Koa from 'koa';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Coordinator } from '../context.js';
import type { ApiState } from '../api/http.js';
import { AppError, forbidden } from '../errors.js';
import { authenticate } from '../tenancy/auth.js';
import { sessionPolicy } from '../tenancy/sessions.js';
import { httpApiClient } from './api-client.js';
import { createMcpServer, type McpToolOptions } from './tools.js';

export const MCP_PATH = '/mcp';

/**
 * MCP over streamable HTTP at /mcp (docs/mcp.md), stateless: each POST gets its own server and
 * transport, so no session lives in this coordinator's memory and any coordinator behind a balancer
 * answers. The caller's API key is checked here as on any route (401 without a valid one), then
 * travels with every tool's REST request to this coordinator's own loopback address.
 *
 * @param loopbackUrl this coordinator's HTTP address as seen from itself (not PUBLIC_URL, which may
 *   be a balancer the coordinator cannot reach).
 */
export function mcpRoutes(app: Coordinator, loopbackUrl: string, opts: McpToolOptions = {}): Koa.Middleware<ApiState> {
  return async (ctx, next) => {
    if (ctx.path !== MCP_PATH) return next();
    const principal = await authenticate(app.db, app.signer, sessionPolicy(app.config), ctx.headers, ctx.method);
    if (principal.kind !== 'apiKey') {
      throw forbidden('The MCP endpoint takes an organization API key (Authorization: Bearer <key> or X-API-Key)');
    }
    if (ctx.method !== 'POST') {
      // Stateless: no stream to resume (GET) and no session to end (DELETE).
      ctx.set('Allow', 'POST');
      throw new AppError(405, 'Method Not Allowed', `${ctx.method} is not supported on ${MCP_PATH}: send JSON-RPC messages with POST`);
    }
    if (ctx.state.bodyError) throw ctx.state.bodyError;

    const auth: Record<string, string> = {};
    for (const name of ['authorization', 'x-api-key']) {
      const value = ctx.get(name);
      if (value) auth[name] = value;
    }
    const server = createMcpServer(
      httpApiClient({ baseUrl: loopbackUrl, publicUrl: app.httpUrl, auth, requestId: ctx.state.requestId }),
      opts,
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    ctx.res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    // The transport writes the answer (JSON, or an SSE stream carrying progress notifications).
    ctx.status = 200;
    ctx.respond = false;
    await transport.handleRequest(ctx.req, ctx.res, ctx.state.body);
  };
}
