import { publishSchema } from '../social/publish-input.js';
import { answer, idempotencyKey, keyHeader, requestBody, type McpTools } from './tool-common.js';

/** post_to_social. */
export function registerSocialTools(tools: McpTools): void {
  tools.server.registerTool(
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
          (await tools.api.call('POST', '/api/organizations/social-posts/publish', {
            body: requestBody(args),
            headers: keyHeader(args.idempotencyKey),
          })) as Record<string, unknown>,
      ),
  );
}
