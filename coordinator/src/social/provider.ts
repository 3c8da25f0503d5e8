import type { Network, PostType } from './networks.js';

/** The organization's profile at the provider (one per organization). */
export interface ProviderProfile {
  id: string;
  organizationId: string;
  /** The provider's credential or handle for the profile (Ayrshare's Profile-Key). */
  providerKey: string;
}

export interface AccountLink {
  accountId: string;
  platform: Network;
}

export interface ProviderMedia {
  videoUrl?: string;
  photoUrls?: string[];
  documentUrl?: string;
}

export interface ProviderPost {
  postType: PostType;
  caption: string;
  platforms: Network[];
  media: ProviderMedia;
  platformFields: Record<string, string>;
  /** Absent: publish now (or, when held, whenever it is released). */
  scheduledAt: Date | null;
  /** Held for approval instead of going out: drafts, and API posts when approveApiPosts is set. */
  hold: boolean;
}

export interface PlatformResult {
  platform: Network;
  status: string;
  id: string | null;
  url: string | null;
  error: string | null;
}

export interface SubmitResult {
  providerJobId: string;
  providerPostId: string;
  state: 'held' | 'scheduled' | 'published';
  platforms: PlatformResult[];
}

export interface JobOutcome {
  providerJobId: string;
  state: 'published' | 'failed';
  platforms: PlatformResult[] | null;
  error: string | null;
}

/** A social-posting service the coordinator hands posts to. */
export interface SocialProvider {
  readonly name: string;
  createProfile(org: { id: string; name: string }): Promise<{ providerKey: string; providerRef: string | null }>;
  /** The page where the user links one network account (OAuth happens there). */
  linkUrl(profile: ProviderProfile, platform: Network, redirectUrl?: string): Promise<string>;
  accounts(profile: ProviderProfile): Promise<AccountLink[]>;
  unlink(profile: ProviderProfile, account: AccountLink): Promise<void>;
  /** Throws ProviderUnsupportedError for a valid post this provider cannot express. */
  validate?(post: ProviderPost): void;
  submit(profile: ProviderProfile, post: ProviderPost): Promise<SubmitResult>;
  /** Moves a held or scheduled job to a new time; `release` lets a held job go out. */
  reschedule(profile: ProviderProfile, providerJobId: string, change: { scheduledAt: Date; release: boolean }): Promise<void>;
  cancel(profile: ProviderProfile, providerJobId: string): Promise<void>;
  /** What became of scheduled jobs whose time has passed; jobs still pending are left out. */
  refresh(profile: ProviderProfile, providerJobIds: string[]): Promise<JobOutcome[]>;
}

/** The provider failed or refused: the API answers 502. */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** The request is valid for the contract but this provider cannot express it: the API answers 400. */
export class ProviderUnsupportedError extends Error {}
