// The API-key routes' answers (coordinator/src/api/api-keys.ts); the studio reads their types.
import { z } from 'zod';

export const apiKeyViewSchema = z.object({
  id: z.string(),
  name: z.string().nullable(),
  prefix: z.string(),
  last4: z.string().describe('The last four characters, to tell keys apart'),
  createdAt: z.string(),
  revokedAt: z.string().nullable(),
});
export type ApiKeyView = z.output<typeof apiKeyViewSchema>;

/** GET /api/organizations/api-keys. */
export const apiKeyListSchema = z.object({ keys: z.array(apiKeyViewSchema) });
export type ApiKeyList = z.output<typeof apiKeyListSchema>;

/** POST /api/organizations/api-keys: the only answer that holds the key itself. */
export const issuedApiKeySchema = apiKeyViewSchema.extend({ key: z.string().describe('vsk_…: send it as Authorization: Bearer <key>') });
export type IssuedApiKey = z.output<typeof issuedApiKeySchema>;
