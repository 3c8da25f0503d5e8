#!/usr/bin/env node
// MCP over stdio for a local agent (Claude Desktop, any MCP client): the tools call a coordinator's
// REST API at SHORTS_API_URL with the API key in SHORTS_API_KEY. docs/mcp.md.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { httpApiClient } from './api-client.js';
import { createMcpServer } from './tools.js';

const DEFAULT_API_URL = 'http://127.0.0.1:3000';

async function main(): Promise<void> {
  const key = process.env.SHORTS_API_KEY?.trim();
  if (!key) {
    // stdout is the protocol's: everything for a person goes to stderr.
    process.stderr.write('shorts-mcp: set SHORTS_API_KEY to an organization API key (and SHORTS_API_URL, default http://127.0.0.1:3000)\n');
    process.exit(2);
  }
  const baseUrl = process.env.SHORTS_API_URL?.trim() || DEFAULT_API_URL;
  const server = createMcpServer(httpApiClient({ baseUrl, auth: { authorization: `Bearer ${key}` } }));
  await server.connect(new StdioServerTransport());
}

main().catch((err: unknown) => {
  process.stderr.write(`shorts-mcp: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
