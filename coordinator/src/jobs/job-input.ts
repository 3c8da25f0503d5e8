import { z } from 'zod';
import { badRequest } from '../errors.js';
import { checkFetchableUrl } from '@shorts/common/net/url-rules';
import type { AllowEntry } from '@shorts/common/net/address-policy';
import { PLAN_LIMITS, type Plan } from '../tenancy/plans.js';
import { DEFAULT_CLIP_LENGTH, type Picking } from '@shorts/common/tasks/analyze-video';
import { predefinedShortsProblem, predefinedShortsRequestSchema, type PredefinedShort } from '@shorts/common/options/predefined-shorts';

const seconds = (what: string) => z.number({ error: `${what} must be a number of seconds` }).finite();

/** How automatic shorts are picked (issue 40); each field is refused with predefinedShorts, which pick nothing. */
const pickingOptionFields = {
  clipLength: z
    .object({
      min: seconds('clipLength.min').min(1, 'clipLength.min must be at least 1 second').optional(),
      max: seconds('clipLength.max').positive('clipLength.max must be more than 0').optional(),
    })
    .nullish()
    .describe(
      `Each automatic short's length in seconds, breath before and after included (default ${DEFAULT_CLIP_LENGTH.min}-${DEFAULT_CLIP_LENGTH.max}); max at most the plan's longest short (90 s on Free and Starter, 300 s on Pro and Business), min below max`,
    ),
  maxShorts: z
    .number()
    .int('maxShorts must be a whole number')
    .min(1, 'maxShorts must be 1 to 20')
    .max(20, 'maxShorts must be 1 to 20')
    .nullish()
    .describe('At most this many automatic shorts, 1-20 (default: about one per 90 s of video, up to 5)'),
  range: z
    .object({ start: seconds('range.start').min(0, 'range.start must be 0 or more'), end: seconds('range.end') })
    .nullish()
    .describe(
      "Only this part of the source (seconds) is transcribed and picked from, and only its minutes are charged; an end past the video's end is the end",
    ),
  topics: z
    .array(z.string().trim().min(1, 'a topic must not be empty').max(100, 'a topic is at most 100 characters'))
    .max(20, 'at most 20 topics')
    .nullish()
    .describe('Keywords or phrases the shorts should be about: shorts that mention one are preferred over any others'),
  prompt: z
    .string()
    .trim()
    .max(2000, 'prompt is at most 2000 characters')
    .nullish()
    .describe(
      'What to pick, in your words, for the language-model picker when one is configured; without one it is ignored and the job says so in `data.notes`',
    ),
  language: z
    .string()
    .regex(/^[A-Za-z]{2,3}(-[A-Za-z]{2,4})?$/, 'language must be an ISO 639-1 code such as "en" or "fr"')
    .nullish()
    .describe('The spoken language (ISO 639-1), passed to the transcriber where it takes one (pocketsphinx knows English only)'),
};

// Optional fields accept null as "not given", as clients that serialise every field send them.
export const createJobSchema = z
  .object({
    // A plain string, so a wrong value gets the contract's own message (validateJob); the document names the one allowed value.
    functionName: z.string({ error: 'functionName is required' }).meta({ enum: ['VideoShorts'], description: 'Always "VideoShorts"' }),
    name: z.string().max(300).nullish(),
    youtubeVideoId: z.string().nullish(),
    fileUrl: z.string().nullish(),
    organizationId: z.string().nullish(),
    webhook: z.string().nullish(),
    sourceJobId: z.string().nullish(),
    options: z
      .object({
        predefinedShorts: predefinedShortsRequestSchema,
        ...pickingOptionFields,
      })
      .nullish(),
  })
  .meta({
    example: {
      functionName: 'VideoShorts',
      name: 'Keynote: the first ten minutes',
      youtubeVideoId: 'dQw4w9WgXcQ',
      webhook: 'https://hooks.example.com/shorts',
      options: { clipLength: { min: 20, max: 45 }, maxShorts: 3, range: { start: 0, end: 600 }, topics: ['pricing'] },
    },
    description:
      'Exactly one source: `youtubeVideoId` (an id or any YouTube URL), `fileUrl` (a public http(s) video URL), or `sourceJobId` (a completed job whose stored video is analysed again). Private and local addresses are refused.',
  });
export type CreateJobBody = z.infer<typeof createJobSchema>;
/**
 * A job's `options` as stored in jobs.options, normalised once when the job is accepted: either the
 * client's predefinedShorts, or the picking options with their defaults filled in (clipLength
 * always; the others when given). Jobs made before these options hold predefinedShorts or nothing.
 */
export interface JobOptions {
  predefinedShorts?: PredefinedShort[] | null;
  clipLength?: { min: number; max: number };
  maxShorts?: number;
  range?: { start: number; end: number };
  topics?: string[];
  prompt?: string;
  language?: string;
}

/** What the agent picks with (the analyze-video payload's `picking`), from the stored options. */
export function pickingOf(options: JobOptions | null | undefined, maxAutoShortSec: number): Picking {
  return {
    clipLength: options?.clipLength ?? { min: DEFAULT_CLIP_LENGTH.min, max: Math.min(DEFAULT_CLIP_LENGTH.max, maxAutoShortSec) },
    maxShorts: options?.maxShorts ?? null,
    range: options?.range ?? null,
    topics: options?.topics ?? [],
    prompt: options?.prompt ?? null,
    language: options?.language ?? null,
  };
}

/** The picking options checked against each other and the plan, in their stored form. */
function normalisePicking(options: NonNullable<CreateJobBody['options']>, plan: Plan): JobOptions {
  const longest = PLAN_LIMITS[plan].maxPredefinedShortSec;
  const given = options.clipLength ?? {};
  const min = given.min ?? Math.min(DEFAULT_CLIP_LENGTH.min, (given.max ?? Infinity) / 2);
  const max = given.max ?? Math.min(longest, Math.max(DEFAULT_CLIP_LENGTH.max, min * 2));
  if (max > longest)
    throw badRequest(`options.clipLength.max: a short may last at most ${longest} seconds on the ${plan} plan (got ${max})`);
  if (!(min < max)) throw badRequest(`options.clipLength: min must be less than max (got ${min} and ${max})`);
  const out: JobOptions = { clipLength: { min, max } };
  if (options.maxShorts != null) out.maxShorts = options.maxShorts;
  if (options.range) {
    const { start, end } = options.range;
    if (!(end > start)) throw badRequest(`options.range: end must be greater than start (got ${start} and ${end})`);
    out.range = { start, end };
  }
  if (options.topics?.length) {
    // Matched without case; the same topic twice is one.
    out.topics = [...new Set(options.topics.map((x) => x.toLowerCase().replace(/\s+/g, ' ')))];
  }
  if (options.prompt) out.prompt = options.prompt;
  if (options.language) out.language = options.language.toLowerCase();
  return out;
}

const PICKING_KEYS = Object.keys(pickingOptionFields) as Array<keyof typeof pickingOptionFields>;

const YOUTUBE_ID = /^[A-Za-z0-9_-]{11}$/;

/** An 11-character id, or any watch / shorts / embed / live / youtu.be URL form. */
export function parseYoutubeVideoId(input: string): string | undefined {
  const value = input.trim();
  if (YOUTUBE_ID.test(value)) return value;
  let url: URL;
  try {
    url = new URL(/^https?:\/\//i.test(value) ? value : `https://${value}`);
  } catch {
    return undefined;
  }
  const host = url.hostname.toLowerCase().replace(/^(www|m|music)\./, '');
  let id: string | null | undefined;
  if (host === 'youtu.be') id = url.pathname.split('/')[1];
  else if (host === 'youtube.com' || host === 'youtube-nocookie.com') {
    if (url.pathname === '/watch') id = url.searchParams.get('v');
    else {
      const m = url.pathname.match(/^\/(shorts|embed|live|v|e)\/([^/?#]+)/);
      id = m?.[2];
    }
  }
  return id && YOUTUBE_ID.test(id) ? id : undefined;
}

export interface ValidatedJob {
  title: string | null;
  youtubeVideoId: string | null;
  fileUrl: string | null;
  webhook: string | null;
  options: JobOptions;
}

export function validateJob(body: CreateJobBody, plan: Plan, allowlist: readonly AllowEntry[] = []): ValidatedJob {
  if (body.functionName !== 'VideoShorts') throw badRequest(`functionName must be "VideoShorts" (got "${body.functionName}")`);
  const hasYoutube = body.youtubeVideoId != null && body.youtubeVideoId !== '';
  const hasFile = body.fileUrl != null && body.fileUrl !== '';
  const hasSourceJob = body.sourceJobId != null && body.sourceJobId !== '';
  if (hasYoutube && hasFile) throw badRequest('Send either youtubeVideoId or fileUrl, not both');
  if (hasSourceJob && (hasYoutube || hasFile)) throw badRequest('Send sourceJobId alone, not with youtubeVideoId or fileUrl');
  if (!hasYoutube && !hasFile && !hasSourceJob) throw badRequest('One of youtubeVideoId or fileUrl is required');
  let youtubeVideoId: string | null = null;
  if (hasYoutube) {
    youtubeVideoId = parseYoutubeVideoId(body.youtubeVideoId!) ?? null;
    if (!youtubeVideoId) throw badRequest('youtubeVideoId must be an 11-character YouTube video id or a YouTube video URL');
  }
  const fileUrl = hasFile ? checkFetchableUrl(body.fileUrl!, 'fileUrl', allowlist).toString() : null;
  const webhook = body.webhook ? checkFetchableUrl(body.webhook, 'webhook', allowlist).toString() : null;

  const shorts = body.options?.predefinedShorts;
  const given = body.options ?? {};
  if (shorts) {
    const picking = PICKING_KEYS.find((k) => given[k] != null);
    const problem = predefinedShortsProblem(shorts, { plan, maxSec: PLAN_LIMITS[plan].maxPredefinedShortSec }, picking);
    if (problem) throw badRequest(problem);
  }
  return {
    title: body.name?.trim() || null,
    youtubeVideoId,
    fileUrl,
    webhook,
    options: shorts ? { predefinedShorts: shorts } : normalisePicking(given, plan),
  };
}
