import { z } from 'zod';
import type { Api } from './http.js';
import type { Coordinator } from '../context.js';
import { transcriptEditResponseSchema } from '@shorts/common/api/jobs';
import { editTranscript, transcriptEditsBodySchema } from '../jobs/transcript-edits.js';
import { jobOrg } from './jobs-common.js';

/** PATCH /api/jobs/:jobId/transcription. */
export function registerJobTranscriptionRoute(api: Api, app: Coordinator): void {
  api.route(
    {
      method: 'patch',
      path: '/api/jobs/:jobId/transcription',
      tag: 'Jobs',
      summary: "Correct words of a completed job's transcript",
      description:
        "Fix, join, split, delete or insert words. A fixed word keeps its timing; joined words span from the first's start to the last's end; a split word's time is shared among its parts by their length; an inserted word must fit the pause it goes in (how an undo restores words exactly). The shorts' `text` (and an AI short's `startId`/`endId`) follow, and every render requested afterwards captions the corrected words. `revision` must be the transcript's current revision (`data.transcription.revision` in the bearer-token form): a stale one is refused with 409, so concurrent editors never lose an edit silently.",
      query: z.object({ organizationId: z.string().optional() }),
      body: transcriptEditsBodySchema,
      response: transcriptEditResponseSchema,
      bodyExample: {
        revision: 0,
        edits: [
          { op: 'replace', index: 1, text: 'fox' },
          { op: 'split', index: 4, texts: ['high', 'five'] },
        ],
      },
      example: {
        revision: 1,
        text: 'the fox jumps high five',
        words: [
          { text: 'the', start: 0.5, end: 0.7 },
          { text: 'fox', start: 0.7, end: 1.1 },
          { text: 'jumps', start: 1.1, end: 1.5 },
          { text: 'high', start: 2.5, end: 2.9 },
          { text: 'five', start: 2.9, end: 3.3 },
        ],
      },
    },
    async (ctx, { query, body }) => {
      const orgId = await jobOrg(app, ctx, query.organizationId ?? body.organizationId);
      return editTranscript(app.db, orgId, ctx.params.jobId!, body);
    },
  );
}
