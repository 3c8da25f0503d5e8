// The jobs routes' answers (coordinator/src/api/jobs.ts): the schemas document them in the OpenAPI
// document, and their types are what the web studio reads (it imports the types only).
import { z } from 'zod';
import { reframeSchema } from '../reframe/schema.js';
import { shortScoresSchema } from '../tasks/analyze-video.js';

/** Who made a short's title, and so whether corrections to its words make it again. */
const titleSources = ['transcript', 'model', 'user'] as const;
export type TitleSource = (typeof titleSources)[number];
const MODEL_TITLE =
  "'model': written by the configured language model, kept through corrections unless they change a word it uses, then made from the corrected words";

const scoreField = z
  .number()
  .optional()
  .describe(
    'Beyond the contract, automatic shorts only: how good a post the picker thinks this short is, 0-100, from `scores` (docs/transcription.md)',
  );
const scoresField = shortScoresSchema
  .describe('The parts of `score`, each 0-100: hook, completeness, standalone, energy, topicMatch (null when the job named no topics)')
  .optional();

const reframeField = reframeSchema
  .nullable()
  .describe('The crop path the cropped video follows and renders reuse (null for a short analysed without one)');

const reframeStaleField = z
  .literal(true)
  .optional()
  .describe('Present when the short was moved outside the range detection analysed: it renders with the centre crop (`reframe` null)');

export const editedShortSchema = z.object({
  id: z.number().describe('Stable: never shifted by a removal, never reused'),
  title: z.string(),
  titleSource: z
    .enum(titleSources)
    .describe(`'transcript': made from the short's words, made again when they are corrected; ${MODEL_TITLE}; 'user': typed`),
  startId: z.number().nullable(),
  endId: z.number().nullable(),
  startTime: z.number(),
  endTime: z.number(),
  text: z.string(),
  reframe: reframeField,
  reframeStale: reframeStaleField,
});
/** What POST, PATCH and DELETE /api/jobs/:jobId/shorts… answer. */
export const shortEditResponseSchema = z
  .object({
    revision: z.number().describe("The shorts' new revision, for the next edit"),
    short: editedShortSchema,
  })
  .meta({
    example: {
      revision: 1,
      short: {
        id: 2,
        title: 'The punchline',
        titleSource: 'user',
        startId: null,
        endId: null,
        startTime: 61.5,
        endTime: 88,
        text: 'and that is why it worked',
        reframe: null,
      },
    },
  });
export type ShortEditResponse = z.output<typeof shortEditResponseSchema>;

// Beyond the contract, in the retrieve forms and the list item alike.
export const STAGE_DESCRIPTION =
  'Only while PROCESSING: why the job waits, when no connected agent has been able to run its work for WAITING_NOTICE_MS (e.g. "waiting for an analysis agent"); otherwise the contract\'s name for its progress value ("initiating services", "downloading video", "transcribing", "generating shorts", "active speaker detection")';
const stageField = z.string().optional().describe(STAGE_DESCRIPTION);

// The two retrieve forms (contract 2.3 and 2.4).
const notesField = z
  .array(z.string())
  .optional()
  .describe('Beyond the contract: what the analysis did with this source that a user should know (no speech, which sound track it heard)');

/** A short in the API-key form (contract 2.3). */
export const apiKeyShortSchema = z.object({
  id: z.string(),
  content: z.string(),
  titleSource: z
    .enum(titleSources)
    .describe(
      `Beyond the contract, as in the bearer form: 'transcript' when \`content\` follows the words, ${MODEL_TITLE}, 'user' when typed`,
    ),
  text: z.string(),
  startTime: z.number(),
  endTime: z.number(),
  reason: z.string().optional().describe('Beyond the contract, automatic shorts only: why it was picked, in one sentence, from `scores`'),
  score: scoreField,
  scores: scoresField,
  reframe: reframeField,
  reframeStale: reframeStaleField,
});

export const apiKeyJobSchema = z
  .object({
    id: z.string(),
    title: z.string().nullable(),
    status: z.string(),
    source: z.string().nullable(),
    progress: z.number(),
    cost: z.number().nullable(),
    costBreakDown: z.record(z.string(), z.unknown()).nullable(),
    message: z.string().optional(),
    stage: stageField,
    data: z
      .object({
        shortsRevision: z.number().describe('Counts edits to the shorts; the `revision` the short-editing routes expect'),
        shorts: z.array(apiKeyShortSchema),
        notes: notesField,
      })
      .optional()
      .describe('Only when COMPLETED'),
  })
  .describe('API-key form (contract 2.3)');
export type ApiKeyJob = z.output<typeof apiKeyJobSchema>;

const transcriptWordSchema = z.object({ text: z.string(), start: z.number(), end: z.number(), confidence: z.number().optional() });

/** A short in the bearer-token form (contract 2.4). */
export const shortSchema = z.object({
  id: z.number(),
  title: z.string(),
  titleSource: z
    .enum(titleSources)
    .describe(
      `Beyond the contract. 'transcript': made from the short's words, and made again when they are corrected; ${MODEL_TITLE}; 'user': typed (PATCH …/shorts/:id with a title, a predefined or added short)`,
    ),
  reason: z.string().optional().describe('AI-generated shorts only: why it was picked, in one sentence, from `scores`'),
  score: scoreField,
  scores: scoresField,
  startId: z.number().nullable(),
  endId: z.number().nullable(),
  startTime: z.number(),
  endTime: z.number(),
  text: z.string(),
  cropFileUrl: z.string().nullable(),
  reframe: reframeField,
  reframeStale: reframeStaleField,
  captionBand: z
    .enum(['top', 'center', 'bottom'])
    .optional()
    .describe('Beyond the contract: where captions go when a render names no position (away from a face framed in the lower third)'),
});

export const bearerJobSchema = z
  .object({
    jobId: z.string(),
    title: z.string().nullable(),
    status: z.string(),
    progress: z.number(),
    createdAt: z.string(),
    // Present once COMPLETED; null where the job has no cost recorded (an imported one, for example).
    cost: z.number().nullable().optional(),
    costBreakDown: z.record(z.string(), z.unknown()).nullable().optional(),
    message: z.string().optional(),
    stage: stageField,
    data: z
      .object({
        transcription: z
          .looseObject({
            language: z.string(),
            text: z.string(),
            words: z.array(transcriptWordSchema),
            durationSec: z.number().optional().describe("The source's duration in seconds"),
            revision: z
              .number()
              .describe('Counts corrections to the transcript; the `revision` PATCH /api/jobs/:jobId/transcription expects'),
          })
          .nullable(),
        shortsRevision: z.number().describe('Counts edits to the shorts; the `revision` the short-editing routes expect'),
        shorts: z
          .array(shortSchema)
          .describe('Best first: scored shorts by `score`, then the others by id (ids follow start time, as the contract says)'),
        source: z
          .object({
            url: z.string().describe('Signed URL; expires (SIGNED_URL_TTL_SEC), supports range requests'),
            width: z.number().nullable(),
            height: z.number().nullable(),
            fps: z.number().nullable(),
          })
          .optional()
          .describe("Beyond the contract: the analysed video itself, for players such as the web studio's"),
        notes: notesField,
      })
      .optional()
      .describe('Only when COMPLETED'),
  })
  .describe('Bearer-token form (contract 2.4)');
export type BearerJob = z.output<typeof bearerJobSchema>;
export type BearerJobShort = NonNullable<BearerJob['data']>['shorts'][number];

/** GET /api/jobs/:jobId: the form depends on the credentials (contract 5). */
export const jobSchema = z.union([apiKeyJobSchema, bearerJobSchema]);

export const jobListItemSchema = z.object({
  id: z.string(),
  title: z.string().nullable(),
  description: z.string().nullable(),
  status: z.enum(['PROCESSING', 'COMPLETED', 'FAILED']),
  functionName: z.literal('VideoShorts'),
  source: z.enum(['API', 'WEB_APP']),
  createdAt: z.string(),
  progress: z.number(),
  shortsCount: z.number(),
  cost: z.number().nullable(),
  costBreakDown: z.record(z.string(), z.unknown()).nullable(),
  creditUsageStatus: z.string(),
  message: z.string().optional().describe('Only when FAILED: why'),
  stage: stageField,
});
export type JobListItem = z.output<typeof jobListItemSchema>;

/** GET /api/jobs. */
export const jobListSchema = z
  .object({
    data: z.array(jobListItemSchema),
    total: z.number().describe('Jobs matching the filters, before paging'),
  })
  .meta({
    example: {
      data: [
        {
          id: '0b5c8e0e-6f0a-4d7e-9a51-2f0d8c3b9e11',
          title: 'Keynote',
          description: null,
          status: 'FAILED',
          functionName: 'VideoShorts',
          source: 'API',
          createdAt: '2026-11-25T10:00:00.000Z',
          progress: 10,
          shortsCount: 0,
          cost: null,
          costBreakDown: null,
          creditUsageStatus: 'RELEASED',
          message: 'The video could not be downloaded: the server answered 404',
        },
      ],
      total: 1,
    },
  });
export type JobList = z.output<typeof jobListSchema>;

/** POST /api/jobs and POST /api/jobs/:jobId/retry. */
export const createdJobSchema = z.object({ id: z.string(), jobId: z.string() });
export type CreatedJob = z.output<typeof createdJobSchema>;

/** DELETE /api/jobs/:jobId. */
export const deletedJobSchema = z
  .object({ id: z.string(), deleted: z.literal(true), deletedFiles: z.number(), freedBytes: z.number() })
  .meta({ example: { id: '0b5c8e0e-6f0a-4d7e-9a51-2f0d8c3b9e11', deleted: true, deletedFiles: 4, freedBytes: 48211345 } });
export type DeletedJob = z.output<typeof deletedJobSchema>;

/** POST /api/jobs/:jobId/cancel. */
export const cancelledJobSchema = z
  .object({
    id: z.string(),
    jobId: z.string(),
    status: z
      .enum(['PROCESSING', 'FAILED'])
      .describe('FAILED when the job ended at once (its work was queued); PROCESSING for the seconds its agent takes to stop'),
  })
  .meta({ example: { id: '0b5c8e0e-6f0a-4d7e-9a51-2f0d8c3b9e11', jobId: '0b5c8e0e-6f0a-4d7e-9a51-2f0d8c3b9e11', status: 'PROCESSING' } });
export type CancelledJob = z.output<typeof cancelledJobSchema>;

/** PATCH /api/jobs/:jobId/transcription. */
export const transcriptEditResponseSchema = z.object({
  revision: z.number().describe('The new revision, for the next edit'),
  text: z.string(),
  words: z.array(transcriptWordSchema),
});
export type TranscriptEditResponse = z.output<typeof transcriptEditResponseSchema>;
