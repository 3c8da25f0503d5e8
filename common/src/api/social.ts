// The social-posting routes' answers (coordinator/src/api/social.ts); the studio reads their types.
import { z } from 'zod';
import { NETWORKS } from './networks.js';

/** GET and PUT …/social-posts/settings. */
export const socialSettingsSchema = z.object({
  isEnabled: z.boolean(),
  approveApiPosts: z.boolean(),
  defaultTimezone: z.string(),
  defaultPlatforms: z.array(z.enum(NETWORKS)),
  queueSlots: z.array(z.object({ dayOfWeek: z.number().int(), time: z.string() })),
  maxPostsPerSlot: z.number().int(),
  maxShortsOfSameVideo: z.number(),
  maxShortsPerWeek: z.number(),
  minimumVideoDurationSeconds: z.number(),
  processOnlyPlaylistId: z.string().nullable(),
});
export type SocialSettingsView = z.output<typeof socialSettingsSchema>;

export const socialPostSchema = z.object({
  id: z.string(),
  status: z.string(),
  title: z.string().nullable(),
  caption: z.string(),
  platforms: z.array(z.string()),
  createdAt: z.string().nullable(),
  scheduledFor: z.string().nullable(),
  providerJobId: z.string().nullable(),
  previewUrl: z.string().nullable(),
  thumbnailUrl: z.string().nullable(),
  providerError: z.string().nullable(),
  providerPlatforms: z.array(
    z.object({
      platform: z.string(),
      status: z.string(),
      id: z.string().nullable(),
      url: z.string().nullable(),
      error: z.string().nullable(),
    }),
  ),
  providerLastEvent: z.string().nullable(),
  isPublishedOnPlatform: z.boolean(),
});
export type SocialPostView = z.output<typeof socialPostSchema>;

/** GET …/social-posts/posts. */
export const socialPostListSchema = z.object({ posts: z.array(socialPostSchema) });
export type SocialPostList = z.output<typeof socialPostListSchema>;

const shortPostSchema = z.object({ id: z.string(), status: z.string(), scheduledFor: z.string().nullable() });
/** POST …/social-posts/edit and …/remove. */
export const socialPostChangeSchema = z.object({ post: shortPostSchema });
export type SocialPostChange = z.output<typeof socialPostChangeSchema>;

/** GET …/social-posts/profile. */
export const socialProfileSchema = z.object({
  connected: z.boolean(),
  profileId: z.string().nullable(),
  connectedAccounts: z.array(z.string()),
  accountLinks: z.array(z.object({ accountId: z.string(), platform: z.string() })),
});
export type SocialProfile = z.output<typeof socialProfileSchema>;

/** POST …/social-posts/connect. */
export const socialConnectSchema = z.object({ access_url: z.string(), platform: z.string(), profileId: z.string() });
export type SocialConnect = z.output<typeof socialConnectSchema>;

/** POST …/social-posts/disconnect-account. */
export const socialDisconnectSchema = z.object({ ok: z.literal(true) });
export type SocialDisconnect = z.output<typeof socialDisconnectSchema>;

/** GET …/social-posts/next-slot. */
export const nextSlotSchema = z.object({ timezone: z.string(), nextSlot: z.string(), nextSlots: z.array(z.string()) });
export type NextSlot = z.output<typeof nextSlotSchema>;

/** POST …/social-posts/publish. */
export const publishedPostSchema = z.object({
  socialPost: z.object({ id: z.string(), status: z.string(), providerJobId: z.string().nullable(), scheduledFor: z.string().nullable() }),
  providerPostId: z.string(),
});
export type PublishedPost = z.output<typeof publishedPostSchema>;
