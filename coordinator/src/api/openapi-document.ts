// The OpenAPI document /openapi.json serves (and `npm run openapi` writes without a server).
import type { Api } from './http.js';
import { webhooksOpenApi } from '../webhooks/openapi.js';

const INFO = {
  title: 'Video Shorts API',
  version: '1.0.0',
  description:
    'Jobs, renders, brand presets, files and social posting. Contract decisions, error codes, idempotency and rate limits: docs/api.md.',
};

/** `serverUrl`: where this coordinator is reached (PUBLIC_URL, else its own address). */
export function serviceOpenApiDocument(api: Api, serverUrl: string): Record<string, unknown> {
  const webhooks = webhooksOpenApi((schema) => api.jsonSchema(schema, 'output'));
  // A variable, so the document reads right wherever the coordinator is reached from.
  const server = {
    url: '{baseUrl}',
    description: 'This coordinator',
    variables: { baseUrl: { default: serverUrl.replace(/\/+$/, ''), description: 'Its address (PUBLIC_URL)' } },
  };
  return { ...api.openApiDocument(INFO, [server]), webhooks };
}
