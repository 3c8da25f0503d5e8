import type { Db } from '../db/db.js';
import { newId } from '../ids.js';
import type { ProviderProfile, SocialProvider } from './provider.js';

const COLUMNS = `id, organization_id AS "organizationId", provider_key AS "providerKey"`;

/** The organization's profile at the configured provider; one made for another provider (the
 *  deployment switched providers) does not count. */
export async function findProfile(db: Db, organizationId: string, provider: string): Promise<ProviderProfile | undefined> {
  return db.one<ProviderProfile>(`SELECT ${COLUMNS} FROM social_profiles WHERE organization_id = $1 AND provider = $2`, [
    organizationId,
    provider,
  ]);
}

export async function ensureProfile(db: Db, provider: SocialProvider, org: { id: string; name: string }): Promise<ProviderProfile> {
  const existing = await findProfile(db, org.id, provider.name);
  if (existing) return existing;
  const created = await provider.createProfile(org);
  const row = await db.one<ProviderProfile>(
    `INSERT INTO social_profiles (organization_id, id, provider, provider_key, provider_ref) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (organization_id) DO UPDATE SET id = EXCLUDED.id, provider = EXCLUDED.provider, provider_key = EXCLUDED.provider_key,
       provider_ref = EXCLUDED.provider_ref, created_at = now()
     WHERE social_profiles.provider <> EXCLUDED.provider
     RETURNING ${COLUMNS}`,
    [org.id, newId(), provider.name, created.providerKey, created.providerRef],
  );
  // Lost a race with a concurrent connect: theirs stands.
  return row ?? (await findProfile(db, org.id, provider.name))!;
}
