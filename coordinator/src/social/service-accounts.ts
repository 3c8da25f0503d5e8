import { notFound } from '../errors.js';
import type { Organization } from '../tenancy/tenancy.js';
import type { Network } from './networks.js';
import { ensureProfile } from './profiles.js';
import { requireProfileAccounts, viaProvider, type SocialCore } from './service-core.js';

export async function profileOf(core: SocialCore, organizationId: string) {
  const { profile, accounts } = await requireProfileAccounts(core, organizationId);
  if (!profile) return { connected: false, profileId: null, connectedAccounts: [], accountLinks: [] };
  return {
    connected: accounts.length > 0,
    profileId: profile.id,
    connectedAccounts: [...new Set(accounts.map((a) => a.platform))],
    accountLinks: accounts.map((a) => ({ accountId: a.accountId, platform: a.platform })),
  };
}

export async function connect({ db, provider }: SocialCore, org: Organization, platform: Network, redirectUrl?: string) {
  const profile = await viaProvider('Could not create the social profile', () => ensureProfile(db, provider, org));
  const accessUrl = await viaProvider('Could not create the account link', () => provider.linkUrl(profile, platform, redirectUrl));
  return { access_url: accessUrl, platform, profileId: profile.id };
}

export async function disconnect(core: SocialCore, organizationId: string, accountId: string) {
  const { profile, accounts } = await requireProfileAccounts(core, organizationId);
  const account = accounts.find((a) => a.accountId === accountId);
  if (!profile || !account) throw notFound('Social account not found');
  await viaProvider('Could not unlink the account', () => core.provider.unlink(profile, account));
  return { ok: true as const };
}
