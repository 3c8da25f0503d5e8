/** What each of the contract's social networks (2.10, listed in common for the studio) accepts. */
import type { Network } from '@shorts/common/api/networks';

export { NETWORKS, type Network } from '@shorts/common/api/networks';

export const POST_TYPES = ['video', 'photo', 'text', 'document'] as const;
export type PostType = (typeof POST_TYPES)[number];

/** Post types a network can carry; publishing another is an "inconsistent combination" (400)
 *  caught here rather than as a provider failure (502). */
export const NETWORK_POST_TYPES: Record<Network, readonly PostType[]> = {
  youtube: ['video'],
  tiktok: ['video', 'photo'],
  instagram: ['video', 'photo'],
  facebook: ['video', 'photo', 'text'],
  linkedin: ['video', 'photo', 'text', 'document'],
  x: ['video', 'photo', 'text'],
};

/** The networks' own image limits, tighter than the contract's 20 for some. */
export const NETWORK_MAX_PHOTOS: Partial<Record<Network, number>> = { x: 4, instagram: 10 };

/** How a platformFields value (always a string) must read. `list` is a JSON array of strings or a
 *  comma-separated list; `lines` a JSON array of strings or one item per line (thread items may
 *  contain commas). */
export type FieldKind = 'text' | 'boolean' | 'integer' | 'list' | 'lines' | { oneOf: readonly string[] };

interface FieldSpec {
  network: Network;
  kind: FieldKind;
}

const f = (network: Network, kind: FieldKind = 'text'): FieldSpec => ({ network, kind });

/** The contract's table of accepted platformFields keys (4.5), with the shape of each value.
 *  Only values fixed by the networks themselves (YouTube visibility, TikTok privacy levels, Instagram
 *  trial strategies) are enumerated, matched case-insensitively; other texts pass through. */
export const PLATFORM_FIELDS: Record<string, FieldSpec> = {
  youtubeTitle: f('youtube'),
  youtubeVisibility: f('youtube', { oneOf: ['public', 'unlisted', 'private'] }),
  youtubeMadeForKids: f('youtube', 'boolean'),
  youtubeContainsSyntheticMedia: f('youtube', 'boolean'),
  youtubeCategoryId: f('youtube', 'integer'),
  youtubePlaylistId: f('youtube'),
  youtubeFirstComment: f('youtube'),

  instagramContentType: f('instagram'),
  instagramShareToFeed: f('instagram', 'boolean'),
  instagramCollaborators: f('instagram', 'list'),
  instagramUserTags: f('instagram', 'list'),
  instagramTrialGraduationStrategy: f('instagram', { oneOf: ['MANUAL', 'SS_PERFORMANCE'] }),
  instagramThumbOffset: f('instagram', 'integer'),
  instagramThumbnail: f('instagram'),
  instagramAudioName: f('instagram'),
  instagramFirstComment: f('instagram'),

  facebookDraft: f('facebook', 'boolean'),
  facebookContentType: f('facebook'),
  facebookTitle: f('facebook'),
  facebookFirstComment: f('facebook'),
  facebookPageId: f('facebook'),
  facebookGeoCountries: f('facebook', 'list'),

  linkedinDocumentTitle: f('linkedin'),
  linkedinOrganizationUrn: f('linkedin'),
  linkedinFirstComment: f('linkedin'),
  linkedinDisableLinkPreview: f('linkedin', 'boolean'),
  linkedinGeoCountries: f('linkedin', 'list'),

  xReplyToTweetId: f('x'),
  xReplySettings: f('x'),
  xThreadItems: f('x', 'lines'),
  xPollOptions: f('x', 'list'),
  xPollDurationMinutes: f('x', 'integer'),
  xLongVideo: f('x', 'boolean'),
  xGeoCountries: f('x', 'list'),

  tiktokPrivacyLevel: f('tiktok', { oneOf: ['PUBLIC_TO_EVERYONE', 'MUTUAL_FOLLOW_FRIENDS', 'FOLLOWER_OF_CREATOR', 'SELF_ONLY'] }),
  tiktokAllowComment: f('tiktok', 'boolean'),
  tiktokAllowDuet: f('tiktok', 'boolean'),
  tiktokAllowStitch: f('tiktok', 'boolean'),
  tiktokContentPreviewConfirmed: f('tiktok', 'boolean'),
  tiktokExpressConsentGiven: f('tiktok', 'boolean'),
  tiktokVideoCoverTimestampMs: f('tiktok', 'integer'),
  tiktokVideoCoverImageUrl: f('tiktok'),
  tiktokMediaType: f('tiktok'),
  tiktokPhotoCoverIndex: f('tiktok', 'integer'),
  tiktokDescription: f('tiktok'),
  tiktokAutoAddMusic: f('tiktok', 'boolean'),
  tiktokVideoMadeWithAi: f('tiktok', 'boolean'),
  tiktokDraft: f('tiktok', 'boolean'),
  tiktokCommercialContentType: f('tiktok'),
};

/** Reads a `list`/`lines` field into its items. Only call on values that passed validation. */
export function fieldItems(value: string, kind: 'list' | 'lines' = 'list'): string[] {
  const trimmed = value.trim();
  if (trimmed.startsWith('[')) return (JSON.parse(trimmed) as string[]).map((s) => s.trim()).filter(Boolean);
  return trimmed
    .split(kind === 'lines' ? /\r?\n/ : ',')
    .map((s) => s.trim())
    .filter(Boolean);
}
