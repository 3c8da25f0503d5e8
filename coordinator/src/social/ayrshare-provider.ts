// Adapter for Ayrshare's REST API (https://www.ayrshare.com/docs): one Ayrshare User Profile per
// organization, addressed with the `Profile-Key` header next to `Authorization: Bearer <API key>`.
//   POST   /profiles              create the organization's profile (returns profileKey)
//   POST   /profiles/generateJWT  the social-account linking page (url)
//   GET    /user                  linked accounts (activeSocialAccounts, displayNames)
//   DELETE /profiles/social       unlink one network
//   POST   /post                  publish, schedule (scheduleDate) or hold (requiresApproval)
//   PATCH  /post                  new scheduleDate, approve a held post
//   DELETE /post                  delete a scheduled or published post
// Ayrshare calls X "twitter"; everything else keeps its name. The base URL is operator
// configuration, not user input, so it is fetched directly rather than through safeFetch.
import type { Network } from './networks.js';
import { fieldItems } from './networks.js';
import {
  ProviderError, ProviderUnsupportedError,
  type AccountLink, type PlatformResult, type ProviderPost, type ProviderProfile, type SocialProvider, type SubmitResult,
} from './provider.js';

export interface AyrshareOptions { apiUrl: string; apiKey: string; domain: string; privateKey: string; timeoutMs: number }

const TO_AYRSHARE: Record<Network, string> = { youtube: 'youtube', facebook: 'facebook', instagram: 'instagram', linkedin: 'linkedin', tiktok: 'tiktok', x: 'twitter' };
const FROM_AYRSHARE: Record<string, Network> = Object.fromEntries(Object.entries(TO_AYRSHARE).map(([k, v]) => [v, k as Network]));

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
  };
}

function errorText(json: Json, text: string): string {
  const parts = [json.message, ...(Array.isArray(json.errors) ? json.errors.map((e: Json) => e?.message) : [])].filter((m) => typeof m === 'string' && m);
  return parts.length ? parts.join('; ') : text.slice(0, 300) || 'no body';
}

/** Ayrshare documents scheduleDate as YYYY-MM-DDThh:mm:ssZ (UTC, no milliseconds). */
const ayrshareDate = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The /post body: shared fields, then each network's options object from platformFields. */
export function postBody(post: ProviderPost): Json {
  const body: Json = {
    post: post.caption,
    platforms: post.platforms.map((p) => TO_AYRSHARE[p]),
  };
  const media = post.media.videoUrl ? [post.media.videoUrl] : post.media.photoUrls ?? (post.media.documentUrl ? [post.media.documentUrl] : []);
  if (media.length) body.mediaUrls = media;
  if (post.postType === 'video') body.isVideo = true;
  if (post.scheduledAt) body.scheduleDate = ayrshareDate(post.scheduledAt);
  if (post.hold) body.requiresApproval = true;

  const firstComments = new Set<string>();
  for (const [key, value] of Object.entries(post.platformFields)) {
    const rule = FIELD_MAP[key];
    if (rule === undefined) throw new ProviderUnsupportedError(`platformFields.${key} is not supported by the ayrshare provider`);
    if (rule === 'consent') continue;
    if (rule === 'firstComment') { firstComments.add(value); continue; }
    const [object, field, convert] = rule;
    const converted = convert ? convert(value) : value;
    if (converted === undefined) continue;
    const target = (body[object] ??= {}) as Json;
    if (field === null) Object.assign(target, converted);
    else if (typeof converted === 'object' && !Array.isArray(converted)) target[field] = { ...(target[field] ?? {}), ...converted };
    else target[field] = converted;
  }
  if (firstComments.size > 1) {
    throw new ProviderUnsupportedError('The ayrshare provider posts one first comment on every network: give the same text in each *FirstComment field');
  }
  if (firstComments.size === 1) body.firstComment = { comment: [...firstComments][0] };
  // YouTube refuses a video without a title; the caption's start stands in for a missing one.
  if (post.platforms.includes('youtube') && !body.youTubeOptions?.title) {
    (body.youTubeOptions ??= {}).title = post.caption.slice(0, 100) || 'Video';
  }
  return body;
}

const bool = (v: string) => v === 'true';
const not = (v: string) => v !== 'true';
const int = (v: string) => Number(v);
const list = (v: string) => fieldItems(v);

const TIKTOK_VISIBILITY: Record<string, string> = {
  PUBLIC_TO_EVERYONE: 'public', MUTUAL_FOLLOW_FRIENDS: 'friends', FOLLOWER_OF_CREATOR: 'followers', SELF_ONLY: 'private',
};

/** [options object, field (null: merge the converted object into it), conversion]; a conversion
 *  answering undefined sends nothing. */
type Rule = 'consent' | 'firstComment' | [object: string, field: string | null, convert?: (v: string) => unknown];

/** Contract platformFields key → Ayrshare option. Keys missing here have no Ayrshare equivalent
 *  and are refused (400) rather than dropped silently; 'consent' keys are the client's own
 *  acknowledgements (TikTok's UX rules) with nothing to send. */
const FIELD_MAP: Record<string, Rule> = {
  youtubeTitle: ['youTubeOptions', 'title'],
  youtubeVisibility: ['youTubeOptions', 'visibility', (v) => v.toLowerCase()],
  youtubeMadeForKids: ['youTubeOptions', 'madeForKids', bool],
  youtubeContainsSyntheticMedia: ['youTubeOptions', 'containsSyntheticMedia', bool],
  youtubeCategoryId: ['youTubeOptions', 'categoryId', int],
  youtubePlaylistId: ['youTubeOptions', 'playListId'],
  youtubeFirstComment: 'firstComment',

  instagramContentType: ['instagramOptions', null, (v) => (/^stor/i.test(v) ? { stories: true } : undefined)],
  instagramShareToFeed: ['instagramOptions', 'shareReelsFeed', bool],
  instagramCollaborators: ['instagramOptions', 'collaborators', list],
  instagramUserTags: ['instagramOptions', 'userTags', (v) => list(v).map((username) => ({ username }))],
  instagramTrialGraduationStrategy: ['instagramOptions', 'trialParams', (v) => ({ graduationStrategy: v.toUpperCase() })],
  instagramThumbOffset: ['instagramOptions', 'thumbNailOffset', int],
  instagramThumbnail: ['instagramOptions', 'coverUrl'],
  instagramAudioName: ['instagramOptions', 'audioName'],
  instagramFirstComment: 'firstComment',

  facebookContentType: ['faceBookOptions', null, (v) => (/^reels?$/i.test(v) ? { reels: true } : /^stor/i.test(v) ? { stories: true } : undefined)],
  facebookTitle: ['faceBookOptions', 'title'],
  facebookFirstComment: 'firstComment',

  linkedinDocumentTitle: ['linkedInOptions', 'title'],
  linkedinFirstComment: 'firstComment',

  xReplySettings: ['twitterOptions', 'replySettings'],
  xPollOptions: ['twitterOptions', 'poll', (v) => ({ options: list(v) })],
  xPollDurationMinutes: ['twitterOptions', 'poll', (v) => ({ duration: int(v) })],
  xLongVideo: ['twitterOptions', 'longVideo', bool],
  xGeoCountries: ['twitterOptions', 'allowCountries', list],

  tiktokPrivacyLevel: ['tikTokOptions', 'visibility', (v) => TIKTOK_VISIBILITY[v.toUpperCase()]],
  tiktokAllowComment: ['tikTokOptions', 'disableComments', not],
  tiktokAllowDuet: ['tikTokOptions', 'disableDuet', not],
  tiktokAllowStitch: ['tikTokOptions', 'disableStitch', not],
  tiktokContentPreviewConfirmed: 'consent',
  tiktokExpressConsentGiven: 'consent',
  tiktokMediaType: 'consent',
  tiktokVideoCoverTimestampMs: ['tikTokOptions', 'thumbNailOffset', int],
  tiktokVideoCoverImageUrl: ['tikTokOptions', 'thumbNail'],
  tiktokPhotoCoverIndex: ['tikTokOptions', 'imageCoverIndex', int],
  tiktokDescription: ['tikTokOptions', 'title'],
  tiktokAutoAddMusic: ['tikTokOptions', 'autoAddMusic', bool],
  tiktokVideoMadeWithAi: ['tikTokOptions', 'isAIGenerated', bool],
  tiktokDraft: ['tikTokOptions', 'draft', bool],
  tiktokCommercialContentType: ['tikTokOptions', null, (v) => (/branded/i.test(v) ? { isBrandedContent: true } : /organic/i.test(v) ? { isBrandOrganic: true } : undefined)],
};
