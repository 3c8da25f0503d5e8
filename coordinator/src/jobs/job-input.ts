import { z } from 'zod';
import { badRequest } from '../errors.js';
import { checkFetchableUrl } from '@shorts/common/net/url-rules';
import type { AllowEntry } from '@shorts/common/net/address-policy';
import { PLAN_LIMITS, type Plan } from '../tenancy/plans.js';

export const predefinedShortSchema = z.object({
  title: z.string().trim().min(1, 'title is required').max(200),
  start: z.number().finite().min(0, 'start must be 0 or more'),
  end: z.number().finite().min(0, 'end must be 0 or more'),
});

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
        predefinedShorts: z
          .array(predefinedShortSchema)
          .max(100)
          .nullish()
          .describe(
            "Your own moments (seconds on the source clock) instead of automatically picked ones; at most the plan's longest short each",
          ),
      })
      .passthrough()
      .nullish(),
  })
  .meta({
    example: {
      functionName: 'VideoShorts',
      name: 'Keynote: the first ten minutes',
      youtubeVideoId: 'dQw4w9WgXcQ',
      webhook: 'https://hooks.example.com/shorts',
      options: { predefinedShorts: [{ title: 'Opening', start: 12.5, end: 41 }] },
    },
    description:
      'Exactly one source: `youtubeVideoId` (an id or any YouTube URL), `fileUrl` (a public http(s) video URL), or `sourceJobId` (a completed job whose stored video is analysed again). Private and local addresses are refused.',
  });
export type CreateJobBody = z.infer<typeof createJobSchema>;
/** A job's `options` as stored in jobs.options: predefinedShorts, and whatever other keys the client sent. */
export type JobOptions = NonNullable<CreateJobBody['options']>;

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
  predefinedShorts: Array<{ title: string; start: number; end: number }> | null;
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

  const maxSec = PLAN_LIMITS[plan].maxPredefinedShortSec;
  const shorts = body.options?.predefinedShorts;
  if (shorts) {
    if (shorts.length === 0) throw badRequest('options.predefinedShorts must not be empty when given');
    shorts.forEach((s, i) => {
      if (!(s.end > s.start)) throw badRequest(`options.predefinedShorts[${i}]: end must be greater than start`);
      if (s.end - s.start > maxSec) {
        throw badRequest(
          `options.predefinedShorts[${i}]: a short may last at most ${maxSec} seconds on the ${plan} plan (got ${Math.round((s.end - s.start) * 100) / 100})`,
        );
      }
    });
  }
  return {
    title: body.name?.trim() || null,
    youtubeVideoId,
    fileUrl,
    webhook,
    predefinedShorts: shorts ?? null,
    options: body.options ?? {},
  };
}
