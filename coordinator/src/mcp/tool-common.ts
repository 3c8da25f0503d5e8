import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ApiCallError, type ApiClient } from './api-client.js';

/** What every *-tools.ts file registers its tools against (built once per caller by createMcpServer). */
export interface McpTools {
  server: McpServer;
  api: ApiClient;
  /** How often wait_for_job reads the job. */
  pollMs: number;
  /** The public URL of an API path. */
  link(path: string): string;
  /** The public URLs of the caption files (srt, vtt, json) under an API path. */
  captionLinks(base: string): Record<string, string>;
}

export const jobId = z.string().min(1).describe('The job id (`id` from create_job)');
export const renderId = z.string().min(1).describe('The render id (`renderId` from render_short)');
export const shortId = z
  .union([z.string(), z.number().int().min(0)])
  .describe('The short\'s id in its job (`data.shorts[].id`: its position, "0" or 0)');
export const idempotencyKey = z
  .string()
  .min(1)
  .max(255)
  .optional()
  .describe('Sent as the Idempotency-Key header: a retry with the same key and input does the work once (docs/api.md, "Idempotency")');

export const enc = encodeURIComponent;

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

export async function answer(run: () => Promise<Record<string, unknown>>): Promise<CallToolResult> {
  try {
    return ok(await run());
  } catch (err) {
    if (err instanceof ApiCallError) return apiError(err);
    throw err;
  }
}

/** A tool's arguments as the request body: the Idempotency-Key travels as its header. */
export const requestBody = <T extends Record<string, unknown>>(args: T): Omit<T, 'idempotencyKey'> => {
  const { idempotencyKey: _ignored, ...rest } = args;
  return rest;
};
export const keyHeader = (key: string | undefined): Record<string, string> => (key ? { 'idempotency-key': key } : {});
