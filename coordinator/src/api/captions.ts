import { z } from 'zod';
import type { Api, ApiContext } from './http.js';
import type { Coordinator } from '../context.js';
import { registerExportRoutes } from './export-routes.js';
import { renderCaptions, shortCaptions, type CaptionExport } from '../captions/captions.js';
import { toJson, toSrt, toVtt } from '../captions/caption-files.js';

// Caption files (docs/captions.md, "Caption files"): SRT, WebVTT with word timestamps, and
// word-level JSON, for a short of a job and for a render, on the short's own clock.

const EXAMPLE_JOB_ID = '0b5c8e0e-6f0a-4d7e-9a51-2f0d8c3b9e11';
const EXAMPLE_RENDER_ID = '7e0d4c1a-92b5-4f3e-b8a7-5c6d2e1f0a93';

const EXAMPLE_SRT = '1\n00:00:00,000 --> 00:00:00,500\nand that is why\n\n2\n00:00:00,500 --> 00:00:01,100\nit worked\n';
const EXAMPLE_VTT =
  'WEBVTT\n\n1\n00:00:00.000 --> 00:00:00.500\nand <00:00:00.200>that <00:00:00.300>is <00:00:00.400>why\n\n2\n00:00:00.500 --> 00:00:01.100\nit <00:00:00.800>worked\n';

const cueSchema = z.object({
  start: z.number().describe("Seconds on the short's clock"),
  end: z.number(),
  text: z.string().describe('One or two lines (\\n between them)'),
  words: z.array(z.number().int()).describe('Indices into `words`'),
});
const captionJsonSchema = z.object({
  jobId: z.string(),
  shortId: z.number().int(),
  renderId: z.string().optional(),
  startTime: z.number().describe("The short's start on the source's clock: 0 on the caption clock"),
  endTime: z.number(),
  durationSec: z.number().describe("The short's length after jump cuts"),
  maxWordsInPage: z.number().int(),
  jumpCuts: z
    .array(z.object({ start: z.number(), end: z.number(), reason: z.string() }))
    .describe("Ranges taken out, on the source's clock (reason `silence` or `filler`)"),
  clock: z.literal('short'),
  words: z.array(z.object({ text: z.string(), start: z.number(), end: z.number() })).describe("Each word, on the short's clock"),
  cues: z.array(cueSchema),
});
const EXAMPLE_JSON = {
  jobId: EXAMPLE_JOB_ID,
  shortId: 0,
  startTime: 61.5,
  endTime: 88,
  durationSec: 24.2,
  maxWordsInPage: 4,
  jumpCuts: [{ start: 62.45, end: 63.75, reason: 'silence' }],
  clock: 'short' as const,
  words: [
    { text: 'and', start: 0, end: 0.2 },
    { text: 'that', start: 0.2, end: 0.3 },
    { text: 'is', start: 0.3, end: 0.4 },
    { text: 'why', start: 0.4, end: 0.5 },
    { text: 'it', start: 0.5, end: 0.8 },
    { text: 'worked', start: 0.8, end: 1.1 },
  ],
  cues: [
    { start: 0, end: 0.5, text: 'and that is why', words: [0, 1, 2, 3] },
    { start: 0.5, end: 1.1, text: 'it worked', words: [4, 5] },
  ],
};

const FORMATS = {
  srt: { type: 'application/x-subrip', schema: z.string(), example: EXAMPLE_SRT, name: 'SRT' },
  vtt: { type: 'text/vtt', schema: z.string(), example: EXAMPLE_VTT, name: 'WebVTT (each word timed with a cue timestamp)' },
  json: { type: 'application/json', schema: captionJsonSchema, example: EXAMPLE_JSON, name: 'word-level JSON' },
} as const;
type Format = keyof typeof FORMATS;
/** What the routes of every format answer, each its format's schema. */
type CaptionFile = z.output<(typeof FORMATS)[Format]['schema']>;

const COMMON =
  "On the short's own clock (0 = its start), re-timed for jump cuts (removed ranges taken out, words inside them and cut fillers dropped), with the transcript's corrected words. One cue per caption page the render burns in (the same words shown together, at most `maxWordsInPage`, a new one after a pause of 0.6 s or a sentence end), at most two lines of about 42 characters. Sent as a download (`Content-Disposition: attachment`).";

function send(ctx: ApiContext, format: Format, out: CaptionExport): CaptionFile {
  ctx.type = `${FORMATS[format].type}; charset=utf-8`;
  ctx.set('Content-Disposition', `attachment; filename="${out.fileBase}.${format}"`);
  if (format === 'srt') return toSrt(out.track);
  if (format === 'vtt') return toVtt(out.track);
  return toJson(out.track, out.meta);
}

export function registerCaptionRoutes(api: Api, app: Coordinator): void {
  for (const format of Object.keys(FORMATS) as Format[]) {
    const f = FORMATS[format];
    registerExportRoutes<(typeof FORMATS)[Format]['schema'], CaptionExport>(api, app, {
      file: `captions.${format}`,
      format: f,
      short: {
        summary: `Caption file of a short: ${f.name}`,
        description:
          `${COMMON} As a render asked now with these options would burn them in: \`maxWordsInPage\` and jump cuts (\`removeSilences\`, \`removeFillers\`) from the query, else the brand preset named by \`brandPresetId\`, else the organization's default preset, else the platform defaults (4 words, no cuts). ` +
          "A job that has not COMPLETED is 409; another organization's job, a removed or unknown short is 404.",
        example: f.example,
        make: (orgId, ctx, query) => shortCaptions(app, orgId, ctx.params.jobId!, ctx.params.shortId!, query),
      },
      render: {
        summary: `Caption file of a render: ${f.name}`,
        description: `${COMMON} From the words, range, \`maxWordsInPage\` and \`editing\` the render was asked with (at any status) and, once it is done, the jump cuts it made: the captions it burned in. Another organization's render is 404.`,
        example: format === 'json' ? { ...EXAMPLE_JSON, renderId: EXAMPLE_RENDER_ID } : f.example,
        make: (orgId, renderId) => renderCaptions(app, orgId, renderId),
      },
      send: (ctx, out) => send(ctx, format, out),
    });
  }
}
