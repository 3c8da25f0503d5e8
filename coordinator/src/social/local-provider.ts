// The built-in provider: linked accounts, link consents and "published" posts live in this
// database, so connect → publish → schedule → cancel works offline and without credentials.
// Account linking stands in for OAuth with a one-time consent URL served by the coordinator; with
// autoLink the account is linked as soon as the URL is issued; a post to a network that is not
// linked yet links a simulated account for it (the service's publish), so a client can try the whole
// flow without the consent step.
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../db/db.js';
import { newId } from '../ids.js';
import { AppError, notFound } from '../errors.js';
import type { Network } from './networks.js';
import { ProviderError, type AccountLink, type PlatformResult, type ProviderProfile, type SocialProvider } from './provider.js';

export const LOCAL_AUTHORIZE_PATH = '/api/organizations/social-posts/local/authorize';
const LINK_TTL_MIN = 30;

export interface LocalProvider extends SocialProvider {
  readonly name: 'local';
  /** The consent page's action: links the account the token was issued for. */
  completeLink(token: string): Promise<{ platform: Network; accountId: string; redirectUrl: string | null }>;
  /** Links a simulated account at once (a post to a network not linked yet); idempotent. */
  linkSimulated(profile: ProviderProfile, platform: Network): Promise<string>;
}

export const isLocalProvider = (p: SocialProvider): p is LocalProvider => p.name === 'local';

const hash = (token: string) => createHash('sha256').update(token).digest('hex');

export function createLocalProvider(db: Db, opts: { baseUrl: string; autoLink: boolean }): LocalProvider {
  return {
    name: 'local',

    async createProfile() {
      return { providerKey: `local-profile-${newId()}`, providerRef: null };
    },

    async linkUrl(profile, platform, redirectUrl) {
      const token = randomBytes(24).toString('base64url');
      await db.query(
        `INSERT INTO social_local_links (token_hash, organization_id, profile_id, platform, redirect_url, expires_at, completed_at)
         VALUES ($1, $2, $3, $4, $5, now() + make_interval(mins => $6), CASE WHEN $7 THEN now() END)`,
        [hash(token), profile.organizationId, profile.providerKey, platform, redirectUrl ?? null, LINK_TTL_MIN, opts.autoLink],
      );
      if (opts.autoLink) await linkAccount(db, profile.organizationId, profile.providerKey, platform);
      return `${opts.baseUrl}${LOCAL_AUTHORIZE_PATH}?token=${token}`;
    },

    completeLink: (token) => completeLink(db, token),

    linkSimulated(profile, platform) {
      return linkAccount(db, profile.organizationId, profile.providerKey, platform);
    },

    async accounts(profile) {
      return db.query<AccountLink>(
        `SELECT id AS "accountId", platform FROM social_local_accounts WHERE organization_id = $1 AND profile_id = $2 ORDER BY linked_at, id`,
        [profile.organizationId, profile.providerKey],
      );
    },

    async unlink(profile, account) {
      await db.query(`DELETE FROM social_local_accounts WHERE organization_id = $1 AND profile_id = $2 AND id = $3`, [
        profile.organizationId,
        profile.providerKey,
        account.accountId,
      ]);
    },

    async submit(profile, post) {
      const state = post.hold ? 'held' : post.scheduledAt ? 'scheduled' : 'published';
      const jobId = `local-job-${newId()}`;
      const postId = `local-post-${newId()}`;
      await db.query(
        `INSERT INTO social_local_jobs (id, organization_id, profile_id, post_id, status, scheduled_for, platforms, payload)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [jobId, profile.organizationId, profile.providerKey, postId, state, post.scheduledAt, post.platforms, JSON.stringify(post)],
      );
      const platforms: PlatformResult[] = post.platforms.map((platform) => ({
        platform,
        status: state === 'published' ? 'success' : state === 'held' ? 'awaiting approval' : 'pending',
        id: state === 'published' ? `${platform}-${postId}` : null,
        url: null,
        error: null,
      }));
      return { providerJobId: jobId, providerPostId: postId, state, platforms };
    },

    async reschedule(profile, providerJobId, change) {
      const row = await db.one<{ id: string }>(
        `UPDATE social_local_jobs SET scheduled_for = $4, updated_at = now(),
           status = CASE WHEN $5 THEN 'scheduled' ELSE status END
         WHERE organization_id = $1 AND profile_id = $2 AND id = $3 AND status IN ('held', 'scheduled') RETURNING id`,
        [profile.organizationId, profile.providerKey, providerJobId, change.scheduledAt, change.release],
      );
      if (!row) throw new ProviderError(`Local provider: job ${providerJobId} is not pending`);
    },

    async cancel(profile, providerJobId) {
      const row = await db.one<{ id: string }>(
        `UPDATE social_local_jobs SET status = 'cancelled', updated_at = now()
         WHERE organization_id = $1 AND profile_id = $2 AND id = $3 RETURNING id`,
        [profile.organizationId, profile.providerKey, providerJobId],
      );
      if (!row) throw new ProviderError(`Local provider: unknown job ${providerJobId}`);
    },

    // Simulated time passing: a scheduled job whose time has come counts as published.
    async refresh(profile, providerJobIds) {
      const rows = await db.query<{ id: string; postId: string; platforms: Network[] }>(
        `UPDATE social_local_jobs SET status = 'published', updated_at = now()
         WHERE organization_id = $1 AND profile_id = $2 AND id = ANY($3) AND status = 'scheduled' AND scheduled_for <= now()
         RETURNING id, post_id AS "postId", platforms`,
        [profile.organizationId, profile.providerKey, providerJobIds],
      );
      return rows.map((r) => ({
        providerJobId: r.id,
        state: 'published' as const,
        platforms: r.platforms.map((platform) => ({ platform, status: 'success', id: `${platform}-${r.postId}`, url: null, error: null })),
        error: null,
      }));
    },
  };
}

/** Links an account of `platform` to the profile (again: its link time moves); answers its id. */
async function linkAccount(db: Db, organizationId: string, profileKey: string, platform: Network): Promise<string> {
  const row = await db.one<{ id: string }>(
    `INSERT INTO social_local_accounts (id, organization_id, profile_id, platform, display_name) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (profile_id, platform) DO UPDATE SET linked_at = now() RETURNING id`,
    [newId(), organizationId, profileKey, platform, `Local ${platform} account`],
  );
  return row!.id;
}

/** The consent page's action: links the account the token was issued for. */
async function completeLink(db: Db, token: string): ReturnType<LocalProvider['completeLink']> {
  const row = await db.one<{
    organizationId: string;
    profileKey: string;
    platform: Network;
    redirectUrl: string | null;
    expired: boolean;
    completed: boolean;
  }>(
    `SELECT organization_id AS "organizationId", profile_id AS "profileKey", platform, redirect_url AS "redirectUrl",
            expires_at < now() AS expired, completed_at IS NOT NULL AS completed
       FROM social_local_links WHERE token_hash = $1`,
    [hash(token)],
  );
  if (!row) throw notFound('Unknown account link');
  // A completed link may be opened again (browser refresh) and answers the same.
  if (row.expired && !row.completed) throw new AppError(410, 'Gone', 'This account link has expired; call /connect again');
  const accountId = await linkAccount(db, row.organizationId, row.profileKey, row.platform);
  await db.query(`UPDATE social_local_links SET completed_at = COALESCE(completed_at, now()) WHERE token_hash = $1`, [hash(token)]);
  return { platform: row.platform, accountId, redirectUrl: row.redirectUrl };
}
