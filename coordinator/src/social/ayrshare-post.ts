// The body of Ayrshare's POST /api/post, built from a ProviderPost: shared fields, then each
// network's options object (youTubeOptions, instagramOptions, ...) from the contract's platformFields.
import { fieldItems, type Network } from './networks.js';
import { ProviderUnsupportedError, type ProviderPost } from './provider.js';

/** The /post body, and each network's options object in it: built here, sent as JSON. */
type Json = Record<string, unknown>;

export const TO_AYRSHARE: Record<Network, string> = {
  youtube: 'youtube',
  facebook: 'facebook',
  instagram: 'instagram',
  linkedin: 'linkedin',
  tiktok: 'tiktok',
  x: 'twitter',
};
export const FROM_AYRSHARE: Record<string, Network> = Object.fromEntries(Object.entries(TO_AYRSHARE).map(([k, v]) => [v, k as Network]));

/** Ayrshare documents scheduleDate as YYYY-MM-DDThh:mm:ssZ (UTC, no milliseconds). */
export const ayrshareDate = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The /post body: shared fields, then each network's options object from platformFields. */
export function postBody(post: ProviderPost): Json {
  const body: Json = {
    post: post.caption,
    platforms: post.platforms.map((p) => TO_AYRSHARE[p]),
  };
  const media = post.media.videoUrl
    ? [post.media.videoUrl]
    : (post.media.photoUrls ?? (post.media.documentUrl ? [post.media.documentUrl] : []));
  if (media.length) body.mediaUrls = media;
  if (post.postType === 'video') body.isVideo = true;
  if (post.scheduledAt) body.scheduleDate = ayrshareDate(post.scheduledAt);
  if (post.hold) body.requiresApproval = true;

  // The network's options object (youTubeOptions, ...), made on first use; only this function fills them.
  const optionsOf = (name: string) => (body[name] ??= {}) as Json;
  const firstComments = new Set<string>();
  for (const [key, value] of Object.entries(post.platformFields)) {
    const rule = FIELD_MAP[key];
    if (rule === undefined) throw new ProviderUnsupportedError(`platformFields.${key} is not supported by the ayrshare provider`);
    if (rule === 'consent') continue;
    if (rule === 'firstComment') {
      firstComments.add(value);
      continue;
    }
    const [object, field, convert] = rule;
    const converted = convert ? convert(value) : value;
    if (converted === undefined) continue;
    const target = optionsOf(object);
    if (field === null) Object.assign(target, converted);
    else if (typeof converted === 'object' && !Array.isArray(converted))
      target[field] = { ...((target[field] ?? {}) as Json), ...converted };
    else target[field] = converted;
  }
  if (firstComments.size > 1) {
    throw new ProviderUnsupportedError(
      'The ayrshare provider posts one first comment on every network: give the same text in each *FirstComment field',
    );
  }
  if (firstComments.size === 1) body.firstComment = { comment: [...firstComments][0] };
  // YouTube refuses a video without a title; the caption's start stands in for a missing one.
  if (post.platforms.includes('youtube') && !(body.youTubeOptions as Json | undefined)?.title) {
    optionsOf('youTubeOptions').title = post.caption.slice(0, 100) || 'Video';
  }
  return body;
}

const bool = (v: string) => v === 'true';
const not = (v: string) => v !== 'true';
const int = (v: string) => Number(v);
const list = (v: string) => fieldItems(v);

const TIKTOK_VISIBILITY: Record<string, string> = {
  PUBLIC_TO_EVERYONE: 'public',
  MUTUAL_FOLLOW_FRIENDS: 'friends',
  FOLLOWER_OF_CREATOR: 'followers',
  SELF_ONLY: 'private',
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

  facebookContentType: [
    'faceBookOptions',
    null,
    (v) => (/^reels?$/i.test(v) ? { reels: true } : /^stor/i.test(v) ? { stories: true } : undefined),
  ],
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
  tiktokCommercialContentType: [
    'tikTokOptions',
    null,
    (v) => (/branded/i.test(v) ? { isBrandedContent: true } : /organic/i.test(v) ? { isBrandOrganic: true } : undefined),
  ],
};
