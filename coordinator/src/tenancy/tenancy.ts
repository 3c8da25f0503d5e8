import { createHash, randomBytes } from 'node:crypto';
import { normaliseEmail } from './email.js';
import type { Db, Queryable } from '../db/db.js';
import { newId } from '../ids.js';
import { badRequest, notFound } from '../errors.js';
import { PLANS, type Plan } from './plans.js';
import { newWebhookSecret } from '../webhooks/signing.js';

export interface Organization {
  id: string;
  name: string;
  plan: Plan;
  credits: number;
  reservedCredits: number;
  storageUsedBytes: number;
  phoneVerificationRequired: boolean;
  retentionDays: number;
  webhookSecret: string;
  createdAt: Date;
}

const ORG_COLUMNS = `id, name, plan, credits, reserved_credits AS "reservedCredits", storage_used_bytes AS "storageUsedBytes",
  phone_verification_required AS "phoneVerificationRequired", retention_days AS "retentionDays",
  webhook_secret AS "webhookSecret", created_at AS "createdAt"`;

function checkPlan(plan: string): Plan {
  if (!(PLANS as readonly string[]).includes(plan)) throw badRequest(`plan must be one of ${PLANS.join(', ')}`);
  return plan as Plan;
}

export async function createOrganization(db: Db, input: { name: string; plan?: string; credits?: number }): Promise<Organization> {
  const plan = checkPlan(input.plan ?? 'free');
  const id = newId();
  return db.tx(async (c) => {
    const credits = input.credits ?? 0;
    const rows = await c.query<Organization>(
      `INSERT INTO organizations (id, name, plan, credits, webhook_secret, webhook_secret_created_at) VALUES ($1, $2, $3, $4, $5, now()) RETURNING ${ORG_COLUMNS}`,
      [id, input.name, plan, credits, newWebhookSecret()],
    );
    if (credits > 0) await c.query(`INSERT INTO credit_ledger (organization_id, kind, amount) VALUES ($1, 'grant', $2)`, [id, credits]);
    return rows.rows[0];
  });
}

export async function getOrganization(db: Queryable, id: string): Promise<Organization | undefined> {
  const res = await db.query<Organization>(`SELECT ${ORG_COLUMNS} FROM organizations WHERE id = $1`, [id]);
  return res.rows[0];
}

export async function requireOrganization(db: Queryable, id: string): Promise<Organization> {
  const org = await getOrganization(db, id);
  if (!org) throw notFound('Organization not found');
  return org;
}

export async function listOrganizations(db: Db): Promise<Organization[]> {
  return db.query<Organization>(`SELECT ${ORG_COLUMNS} FROM organizations ORDER BY created_at`);
}

export async function updateOrganization(
  db: Db,
  id: string,
  patch: { plan?: string; credits?: number; retentionDays?: number; phoneVerificationRequired?: boolean; name?: string },
): Promise<Organization> {
  if (patch.plan !== undefined) checkPlan(patch.plan);
  if (
    patch.retentionDays !== undefined &&
    !(Number.isInteger(patch.retentionDays) && patch.retentionDays >= 1 && patch.retentionDays <= 180)
  ) {
    throw badRequest('retention days must be an integer from 1 to 180');
  }
  if (patch.credits !== undefined && !(patch.credits >= 0)) throw badRequest('credits must be a non-negative number');
  return db.tx(async (c) => {
    const before = await requireOrganization(c, id);
    const rows = await c.query<Organization>(
      `UPDATE organizations SET
         name = COALESCE($2, name), plan = COALESCE($3, plan), credits = COALESCE($4, credits),
         retention_days = COALESCE($5, retention_days),
         phone_verification_required = COALESCE($6, phone_verification_required)
       WHERE id = $1 RETURNING ${ORG_COLUMNS}`,
      [
        id,
        patch.name ?? null,
        patch.plan ?? null,
        patch.credits ?? null,
        patch.retentionDays ?? null,
        patch.phoneVerificationRequired ?? null,
      ],
    );
    if (patch.credits !== undefined && patch.credits !== before.credits) {
      await c.query(`INSERT INTO credit_ledger (organization_id, kind, amount) VALUES ($1, 'grant', $2)`, [
        id,
        patch.credits - before.credits,
      ]);
    }
    return rows.rows[0];
  });
}

export interface User {
  id: string;
  email: string;
  name: string | null;
  phoneNumber: string | null;
  phoneVerified: boolean;
}

export async function createUser(
  db: Db,
  input: { email: string; name?: string; organizationId?: string; role?: string; phoneNumber?: string; phoneVerified?: boolean },
): Promise<User> {
  return db.tx(async (c) => {
    const id = newId();
    const res = await c.query<User>(
      `INSERT INTO users (id, email, name, phone_number, phone_verified) VALUES ($1, $2, $3, $4, $5)
       RETURNING id, email, name, phone_number AS "phoneNumber", phone_verified AS "phoneVerified"`,
      [id, normaliseEmail(input.email), input.name ?? null, input.phoneNumber ?? null, input.phoneVerified ?? false],
    );
    if (input.organizationId) {
      await requireOrganization(c, input.organizationId);
      await c.query('INSERT INTO memberships (user_id, organization_id, role) VALUES ($1, $2, $3)', [
        id,
        input.organizationId,
        input.role ?? 'member',
      ]);
    }
    return res.rows[0];
  });
}

export async function addMembership(db: Db, userId: string, organizationId: string, role = 'member'): Promise<void> {
  await db.query(
    `INSERT INTO memberships (user_id, organization_id, role) VALUES ($1, $2, $3)
     ON CONFLICT (user_id, organization_id) DO UPDATE SET role = EXCLUDED.role`,
    [userId, organizationId, role],
  );
}

export async function getUser(db: Queryable, id: string): Promise<User | undefined> {
  const res = await db.query<User>(
    `SELECT id, email, name, phone_number AS "phoneNumber", phone_verified AS "phoneVerified" FROM users WHERE id = $1`,
    [id],
  );
  return res.rows[0];
}

export async function isMember(db: Queryable, userId: string, organizationId: string): Promise<boolean> {
  const res = await db.query('SELECT 1 FROM memberships WHERE user_id = $1 AND organization_id = $2', [userId, organizationId]);
  return (res.rowCount ?? 0) > 0;
}

// --- API keys: `vsk_` + 32 random bytes in base62; only the SHA-256 is stored.

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
function base62(bytes: Buffer): string {
  let n = BigInt('0x' + bytes.toString('hex'));
  let out = '';
  while (n > 0n) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(43, '0');
}

export const API_KEY_PREFIX = 'vsk_';
export const hashApiKey = (key: string) => createHash('sha256').update(key).digest('hex');

export interface ApiKeyInfo {
  id: string;
  organizationId: string;
  name: string | null;
  prefix: string;
  last4: string;
  createdAt: Date;
  revokedAt: Date | null;
}

const KEY_COLUMNS = `id, organization_id AS "organizationId", name, prefix, last4, created_at AS "createdAt", revoked_at AS "revokedAt"`;

export async function issueApiKey(db: Db, organizationId: string, name?: string): Promise<ApiKeyInfo & { key: string }> {
  await requireOrganization(db.pool, organizationId);
  const key = API_KEY_PREFIX + base62(randomBytes(32));
  const row = await db.one<ApiKeyInfo>(
    `INSERT INTO api_keys (id, organization_id, name, prefix, last4, key_hash) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${KEY_COLUMNS}`,
    [newId(), organizationId, name ?? null, API_KEY_PREFIX, key.slice(-4), hashApiKey(key)],
  );
  return { ...row!, key };
}

export async function listApiKeys(db: Db, organizationId: string): Promise<ApiKeyInfo[]> {
  return db.query<ApiKeyInfo>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE organization_id = $1 ORDER BY created_at`, [organizationId]);
}

/** @param organizationId when given, a key of another organization is not found (the API's rule). */
export async function revokeApiKey(db: Db, keyId: string, organizationId?: string): Promise<ApiKeyInfo> {
  const row =
    organizationId === undefined
      ? await db.one<ApiKeyInfo>(`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 RETURNING ${KEY_COLUMNS}`, [
          keyId,
        ])
      : await db.one<ApiKeyInfo>(
          `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 AND organization_id = $2 RETURNING ${KEY_COLUMNS}`,
          [keyId, organizationId],
        );
  if (!row) throw notFound('API key not found');
  const cache = activeKeyCaches.get(db);
  if (cache) for (const [hash, k] of cache) if (k.id === keyId) cache.delete(hash);
  return row;
}

/**
 * How long an active key, once looked up, is trusted without asking Postgres again. Every API request
 * authenticates, and a key row only ever changes by being revoked: a revocation in this process
 * clears the entry at once, one made elsewhere (the admin CLI, another coordinator) takes effect
 * within this time. Unknown and revoked keys are never cached, so a new key works at once.
 */
export const API_KEY_CACHE_MS = 5_000;
const API_KEY_CACHE_MAX = 10_000;
const activeKeyCaches = new WeakMap<Db, Map<string, { id: string; organizationId: string; until: number }>>();

export async function findActiveApiKey(db: Db, key: string): Promise<{ id: string; organizationId: string } | undefined> {
  const hash = hashApiKey(key);
  let cache = activeKeyCaches.get(db);
  if (!cache) activeKeyCaches.set(db, (cache = new Map()));
  const hit = cache.get(hash);
  if (hit && hit.until > Date.now()) return { id: hit.id, organizationId: hit.organizationId };
  const row = await db.one<{ id: string; organizationId: string }>(
    `SELECT id, organization_id AS "organizationId" FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`,
    [hash],
  );
  cache.delete(hash);
  if (row) {
    // Oldest first in a Map: dropping the first entry bounds memory under many distinct keys.
    if (cache.size >= API_KEY_CACHE_MAX) cache.delete(cache.keys().next().value!);
    cache.set(hash, { ...row, until: Date.now() + API_KEY_CACHE_MS });
  }
  return row;
}
