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
import { FROM_AYRSHARE, TO_AYRSHARE, ayrshareDate, postBody } from './ayrshare-post.js';
import {
  ProviderError,
  type AccountLink, type JobOutcome, type PlatformResult, type SocialProvider, type SubmitResult,
} from './provider.js';

export interface AyrshareOptions { apiUrl: string; apiKey: string; domain: string; privateKey: string; timeoutMs: number }

type Json = Record<string, any>;

export function createAyrshareProvider(opts: AyrshareOptions): SocialProvider {
  async function call(method: string, path: string, body?: Json, profileKey?: string): Promise<Json> {
    const headers: Record<string, string> = { authorization: `Bearer ${opts.apiKey}`, accept: 'application/json' };
    if (body) headers['content-type'] = 'application/json';
    if (profileKey) headers['profile-key'] = profileKey;
    let res: Response;
    try {
      res = await fetch(opts.apiUrl + path, { method, headers, body: body ? JSON.stringify(body) : undefined, signal: AbortSignal.timeout(opts.timeoutMs) });
    } catch (err) {
      const reason = (err as Error).name === 'TimeoutError' ? `no answer within ${opts.timeoutMs} ms` : (err as Error).message;
      throw new ProviderError(`Ayrshare ${method} ${path} failed: ${reason}`);
    }
    const text = await res.text();
    let json: Json = {};
    try { json = text ? JSON.parse(text) : {}; } catch { /* not JSON: reported below */ }
    if (!res.ok || json.status === 'error') {
      throw new ProviderError(`Ayrshare ${method} ${path} answered HTTP ${res.status}: ${errorText(json, text)}`, res.status);
    }
    return json;
  }

  return {
    name: 'ayrshare',

    async createProfile(org) {
      // Titles must be unique at Ayrshare; the organization id makes them so.
      const json = await call('POST', '/profiles', { title: `${org.name} (${org.id})` });
      if (typeof json.profileKey !== 'string' || !json.profileKey) throw new ProviderError('Ayrshare created a profile without a profileKey');
      return { providerKey: json.profileKey, providerRef: typeof json.refId === 'string' ? json.refId : null };
    },

    async linkUrl(profile, platform, redirectUrl) {
      const json = await call('POST', '/profiles/generateJWT', {
        domain: opts.domain,
        privateKey: opts.privateKey,
        profileKey: profile.providerKey,
        allowedSocial: [TO_AYRSHARE[platform]],
        ...(redirectUrl ? { redirect: redirectUrl } : {}),
      });
      if (typeof json.url !== 'string' || !json.url) throw new ProviderError('Ayrshare generateJWT returned no url');
      return json.url;
    },

    async accounts(profile) {
      const json = await call('GET', '/user', undefined, profile.providerKey);
      const names: Json[] = Array.isArray(json.displayNames) ? json.displayNames : [];
      const active: string[] = Array.isArray(json.activeSocialAccounts) ? json.activeSocialAccounts : [];
      const links: AccountLink[] = [];
      for (const name of active) {
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
      const json = await call('POST', '/post', postBody(post), profile.providerKey);
      const id = typeof json.id === 'string' ? json.id : typeof json.posts?.[0]?.id === 'string' ? json.posts[0].id : undefined;
      if (!id) throw new ProviderError('Ayrshare accepted the post but returned no post id');
      const postIds: Json[] = Array.isArray(json.postIds) ? json.postIds : Array.isArray(json.posts?.[0]?.postIds) ? json.posts[0].postIds : [];
      const platforms: PlatformResult[] = post.platforms.map((platform) => {
        const hit = postIds.find((p) => p.platform === TO_AYRSHARE[platform]);
        return {
          platform,
          status: hit?.status ?? (post.hold ? 'awaiting approval' : post.scheduledAt ? 'pending' : 'unknown'),
          id: hit?.id ? String(hit.id) : null,
          url: typeof hit?.postUrl === 'string' ? hit.postUrl : null,
          error: null,
        };
      });
      const state: SubmitResult['state'] = post.hold ? 'held' : post.scheduledAt ? 'scheduled' : 'published';
      return { providerJobId: id, providerPostId: id, state, platforms };
    },

    async reschedule(profile, providerJobId, change) {
      await call('PATCH', '/post', {
        id: providerJobId,
        scheduleDate: ayrshareDate(change.scheduledAt),
        ...(change.release ? { approved: true } : {}),
      }, profile.providerKey);
    },

    async cancel(profile, providerJobId) {
      await call('DELETE', '/post', { id: providerJobId }, profile.providerKey);
    },

    async refresh(profile, providerJobIds) {
      const outcomes: JobOutcome[] = [];
      for (const id of providerJobIds) {
        let json: Json;
        try {
          json = await call('GET', `/post/${encodeURIComponent(id)}`, undefined, profile.providerKey);
        } catch (err) {
          // A post that failed at the networks answers status "error": that is its outcome.
          if (err instanceof ProviderError && err.status !== undefined && err.status < 500) {
            outcomes.push({ providerJobId: id, state: 'failed', platforms: null, error: err.message });
            continue;
          }
          throw err;
        }
        if (json.status !== 'success') continue; // pending, awaiting approval: nothing new
        const postIds: Json[] = Array.isArray(json.postIds) ? json.postIds : [];
        const platforms = postIds.filter((p) => FROM_AYRSHARE[p.platform]).map((p) => ({
          platform: FROM_AYRSHARE[p.platform]!, status: String(p.status ?? 'success'), id: p.id ? String(p.id) : null,
          url: typeof p.postUrl === 'string' ? p.postUrl : null, error: null,
        }));
        outcomes.push({ providerJobId: id, state: 'published', platforms: platforms.length ? platforms : null, error: null });
      }
      return outcomes;
    },
  };
}

function errorText(json: Json, text: string): string {
  const parts = [json.message, ...(Array.isArray(json.errors) ? json.errors.map((e: Json) => e?.message) : [])].filter((m) => typeof m === 'string' && m);
  return parts.length ? parts.join('; ') : text.slice(0, 300) || 'no body';
}

