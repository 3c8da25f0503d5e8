import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ApiClient } from './api-client.js';
import type { McpTools } from './tool-common.js';
import { registerJobTools } from './job-tools.js';
import { registerShortTools } from './short-tools.js';
import { registerRenderTools } from './render-tools.js';
import { registerSocialTools } from './social-tools.js';

// MCP tools over the REST API (docs/mcp.md). Each tool takes the route's own zod schema (less
// `organizationId`: an API key names its organization) and makes the same REST request with the
// caller's credentials, so its answer, scoping and errors are the API's. Results carry links, never bytes.
// Each group of tools lives in its own *-tools.ts file.

export interface McpToolOptions {
  /** How often wait_for_job reads the job (tests shorten it). */
  pollMs?: number;
}

const FORMATS = ['srt', 'vtt', 'json'] as const;

/** An MCP server whose tools call `api` (one per caller: the client carries the caller's credentials). */
export function createMcpServer(api: ApiClient, opts: McpToolOptions = {}): McpServer {
  const server = new McpServer({ name: 'shorts-render-cluster', version: '0.1.0' });
  const link = (path: string) => api.publicUrl + path;
  const captionLinks = (base: string) => Object.fromEntries(FORMATS.map((f) => [f, link(`${base}/captions.${f}`)]));
  const tools: McpTools = { server, api, pollMs: opts.pollMs ?? 1000, link, captionLinks };
  // In this order in the tools list.
  registerJobTools(tools);
  registerShortTools(tools);
  registerRenderTools(tools);
  registerSocialTools(tools);
  return server;
}
