// Adapter for Ayrshare's REST API (https://www.ayrshare.com/docs): one Ayrshare User Profile per
// organization, addressed with the `Profile-Key` header next to `Authorization: Bearer <API key>`.
//   POST   /profiles              create the organization's profile (returns profileKey)
//   POST   /profiles/generateJWT  the social-account linking page (url)
//   GET    /user                  linked accounts (activeSocialAccounts, displayNames)
//   DELETE /profiles/social       unlink one network
//   POST   /post                  publish, schedule (scheduleDate) or hold (requiresApproval)
//   PATCH  /post                  new scheduleDate, approve a held post
//   DELETE /post                  delete a scheduled or published post
//   GET    /post/:id              a post's status once its schedule time has passed
// Ayrshare calls X "twitter"; everything else keeps its name. The base URL is operator
// configuration, not user input, so it is fetched directly rather than through safeFetch.
import { z } from 'zod';
import { FROM_AYRSHARE, TO_AYRSHARE, ayrshareDate, postBody } from './ayrshare-post.js';
import {
  ProviderError,
  type AccountLink,
  type JobOutcome,
  type PlatformResult,
  type ProviderPost,
  type SocialProvider,
  type SubmitResult,
} from './provider.js';

export interface AyrshareOptions {
  apiUrl: string;
  apiKey: string;
  domain: string;
  privateKey: string;
  timeoutMs: number;
}

// Ayrshare's answers, parsed at this edge. Each schema is as lenient as the adapter's use of the
// answer: a field of another type counts as absent (`.catch`), so an answer's odd field never
// throws where the adapter would have ignored it; what the adapter needs is checked where it is used.

/** What every answer may carry: `status: "error"` with a message and/or `errors[].message`. */
const envelopeSchema = z
  .object({
    status: z.unknown(),
    message: z.unknown(),
    errors: z
      .array(z.object({ message: z.unknown() }).partial().catch({}))
      .optional()
      .catch(undefined),
  })
  .partial()
  .catch({});

/** POST /profiles. */
const profileSchema = z
  .object({
    profileKey: z.string().optional().catch(undefined),
    refId: z.string().optional().catch(undefined),
  })
  .catch({});

/** POST /profiles/generateJWT. */
const linkSchema = z.object({ url: z.string().optional().catch(undefined) }).catch({});

/** GET /user: the linked networks (Ayrshare's names) and their accounts' display data. */
const userSchema = z
  .object({
    activeSocialAccounts: z.array(z.unknown()).catch([]),
    displayNames: z.array(z.object({ platform: z.unknown(), id: z.unknown() }).partial().catch({})).catch([]),
  })
  .catch({ activeSocialAccounts: [], displayNames: [] });

/** One network's part of a post: its id and URL there, its status. */
const platformPostSchema = z
  .object({
    platform: z.string().optional().catch(undefined),
    status: z.unknown(),
    id: z.unknown(),
    postUrl: z.string().optional().catch(undefined),
  })
  .partial()
  .catch({});

/** A post as POST /post (sometimes inside `posts[]`) and GET /post/:id answer it. */
const postSchema = z
  .object({
    status: z.unknown(),
    id: z.string().optional().catch(undefined),
    postIds: z.array(platformPostSchema).optional().catch(undefined),
  })
  .partial()
  .catch({});

const submittedSchema = postSchema.and(z.object({ posts: z.array(postSchema).optional().catch(undefined) }).catch({}));

/** Ayrshare's REST API: `call` answers the parsed JSON, or throws a ProviderError naming the request. */
type AyrshareCall = (method: string, path: string, body?: Record<string, unknown>, profileKey?: string) => Promise<unknown>;

function ayrshareClient(opts: AyrshareOptions): AyrshareCall {
  return async function call(method: string, path: string, body?: Record<string, unknown>, profileKey?: string): Promise<unknown> {
    const headers: Record<string, string> = { authorization: `Bearer ${opts.apiKey}`, accept: 'application/json' };
    if (body) headers['content-type'] = 'application/json';
    if (profileKey) headers['profile-key'] = profileKey;
    let res: Response;
    try {
      res = await fetch(opts.apiUrl + path, {
        method,
        headers,
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(opts.timeoutMs),
      });
    } catch (err) {
      const reason = (err as Error).name === 'TimeoutError' ? `no answer within ${opts.timeoutMs} ms` : (err as Error).message;
      throw new ProviderError(`Ayrshare ${method} ${path} failed: ${reason}`);
    }
    const text = await res.text();
    let json: unknown = {};
    try {
      json = text ? JSON.parse(text) : {};
    } catch {
      /* not JSON: reported below */
    }
    const envelope = envelopeSchema.parse(json);
    if (!res.ok || envelope.status === 'error') {
      throw new ProviderError(`Ayrshare ${method} ${path} answered HTTP ${res.status}: ${errorText(envelope, text)}`, res.status);
    }
    return json;
  };
}

export function createAyrshareProvider(opts: AyrshareOptions): SocialProvider {
  const call = ayrshareClient(opts);

  return {
    name: 'ayrshare',

    async createProfile(org) {
      // Titles must be unique at Ayrshare; the organization id makes them so.
      const json = profileSchema.parse(await call('POST', '/profiles', { title: `${org.name} (${org.id})` }));
      if (!json.profileKey) throw new ProviderError('Ayrshare created a profile without a profileKey');
      return { providerKey: json.profileKey, providerRef: json.refId ?? null };
    },

    async linkUrl(profile, platform, redirectUrl) {
      const json = linkSchema.parse(
        await call('POST', '/profiles/generateJWT', {
          domain: opts.domain,
          privateKey: opts.privateKey,
          profileKey: profile.providerKey,
          allowedSocial: [TO_AYRSHARE[platform]],
          ...(redirectUrl ? { redirect: redirectUrl } : {}),
        }),
      );
      if (!json.url) throw new ProviderError('Ayrshare generateJWT returned no url');
      return json.url;
    },

    async accounts(profile) {
      const { displayNames: names, activeSocialAccounts: active } = userSchema.parse(
        await call('GET', '/user', undefined, profile.providerKey),
      );
      const links: AccountLink[] = [];
      for (const name of active.filter((n) => typeof n === 'string')) {
        const platform = FROM_AYRSHARE[name];
        if (!platform) continue; // networks outside the contract (gmb, pinterest, ...)
        const display = names.find((d) => d.platform === name);
        links.push({ platform, accountId: display?.id ? String(display.id) : name });
      }
      return links;
    },

    async unlink(profile, account) {
      await call('DELETE', '/profiles/social', { platform: TO_AYRSHARE[account.platform] }, profile.providerKey);
    },

    validate(post) {
      postBody(post);
    },

    async submit(profile, post) {
      const json = submittedSchema.parse(await call('POST', '/post', postBody(post), profile.providerKey));
      const id = json.id ?? json.posts?.[0]?.id;
      if (!id) throw new ProviderError('Ayrshare accepted the post but returned no post id');
      return submitResult(id, json.postIds ?? json.posts?.[0]?.postIds ?? [], post);
    },

    async reschedule(profile, providerJobId, change) {
      await call(
        'PATCH',
        '/post',
        {
          id: providerJobId,
          scheduleDate: ayrshareDate(change.scheduledAt),
          ...(change.release ? { approved: true } : {}),
        },
        profile.providerKey,
      );
    },

    async cancel(profile, providerJobId) {
      await call('DELETE', '/post', { id: providerJobId }, profile.providerKey);
    },

    async refresh(profile, providerJobIds) {
      const outcomes: JobOutcome[] = [];
      for (const id of providerJobIds) {
        const outcome = await postOutcome(call, profile.providerKey, id);
        if (outcome) outcomes.push(outcome);
      }
      return outcomes;
    },
  };
}

function errorText(envelope: z.infer<typeof envelopeSchema>, text: string): string {
  const parts = [envelope.message, ...(envelope.errors ?? []).map((e) => e.message)].filter((m) => typeof m === 'string' && m);
  return parts.length ? parts.join('; ') : text.slice(0, 300) || 'no body';
}

/** What POST /post answered, per network of the post (a network it did not mention: what the post asked for). */
function submitResult(id: string, postIds: z.infer<typeof platformPostSchema>[], post: ProviderPost): SubmitResult {
  const platforms: PlatformResult[] = post.platforms.map((platform) => {
    const hit = postIds.find((p) => p.platform === TO_AYRSHARE[platform]);
    return {
      platform,
      status: typeof hit?.status === 'string' ? hit.status : post.hold ? 'awaiting approval' : post.scheduledAt ? 'pending' : 'unknown',
      id: hit?.id ? String(hit.id) : null,
      url: hit?.postUrl ?? null,
      error: null,
    };
  });
  const state: SubmitResult['state'] = post.hold ? 'held' : post.scheduledAt ? 'scheduled' : 'published';
  return { providerJobId: id, providerPostId: id, state, platforms };
}

/** A post's outcome once its schedule time has passed; undefined while it is still pending or held. */
async function postOutcome(call: AyrshareCall, profileKey: string, id: string): Promise<JobOutcome | undefined> {
  let json: z.infer<typeof postSchema>;
  try {
    json = postSchema.parse(await call('GET', `/post/${encodeURIComponent(id)}`, undefined, profileKey));
  } catch (err) {
    // A post that failed at the networks answers status "error": that is its outcome.
    if (err instanceof ProviderError && err.status !== undefined && err.status < 500)
      return { providerJobId: id, state: 'failed', platforms: null, error: err.message };
    throw err;
  }
  if (json.status !== 'success') return undefined; // pending, awaiting approval: nothing new
  const platforms = (json.postIds ?? []).flatMap((p) => {
    const platform = p.platform === undefined ? undefined : FROM_AYRSHARE[p.platform];
    return platform
      ? [{ platform, status: String(p.status ?? 'success'), id: p.id ? String(p.id) : null, url: p.postUrl ?? null, error: null }]
      : [];
  });
  return { providerJobId: id, state: 'published', platforms: platforms.length ? platforms : null, error: null };
}
