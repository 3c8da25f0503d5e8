// Browser sign-in for the web studio: passwords hashed with scrypt (memory-hard), one-time sign-in
// links printed by the admin CLI, and server-side sessions. Only hashes of tokens are stored.
import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { Db, Queryable } from '../db/db.js';
import { AppError, badRequest, notFound } from '../../../common/src/errors.js';
import { randomToken } from '../../../common/src/ids.js';

const scrypt = (password: string, salt: Buffer, keylen: number, opts: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) => scryptCb(password, salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key))));

// N=2^15, r=8: 32 MiB and tens of milliseconds per guess (OWASP's scrypt floor is N=2^17 at r=8,p=1
// or an equivalent; 2^15 keeps two-core machines responsive while staying memory-hard).
const SCRYPT = { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const KEY_LEN = 32;

export const MIN_PASSWORD_LENGTH = 10;
export const SESSION_TTL_SEC = 7 * 24 * 3600;
export const LOGIN_LINK_TTL_SEC = 15 * 60;

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** `scrypt$N$r$p$salt$key`, so the parameters can grow without breaking stored hashes. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, KEY_LEN, SCRYPT);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64url');
  const actual = await scrypt(password, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n), r: Number(r), p: Number(p), maxmem: SCRYPT.maxmem,
  });
  return timingSafeEqual(actual, expected);
}

// Spent on unknown e-mails too, so the answer time does not tell which addresses exist.
let decoyHash: Promise<string> | undefined;

export async function setPassword(db: Db, userId: string, password: string): Promise<void> {
  if (password.length < MIN_PASSWORD_LENGTH) throw badRequest(`A password needs at least ${MIN_PASSWORD_LENGTH} characters`);
  const hash = await hashPassword(password);
  const res = await db.pool.query('UPDATE users SET password_hash = $2 WHERE id = $1', [userId, hash]);
  if (!res.rowCount) throw notFound('User not found');
}

const badCredentials = () => new AppError(401, 'Unauthorized', 'Wrong e-mail or password');

/** The user's id when the e-mail and password match; one answer for every mismatch. */
export async function checkPassword(db: Db, email: string, password: string): Promise<string> {
  const row = await db.one<{ id: string; hash: string | null }>(
    'SELECT id, password_hash AS hash FROM users WHERE lower(email) = lower($1)', [email.trim()],
  );
  if (!row?.hash) {
    decoyHash ??= hashPassword(randomToken(12));
    await verifyPassword(password, await decoyHash);
    throw badCredentials();
  }
  if (!(await verifyPassword(password, row.hash))) throw badCredentials();
  return row.id;
}

export async function findUserIdByEmail(db: Db, email: string): Promise<string | undefined> {
  return (await db.one<{ id: string }>('SELECT id FROM users WHERE lower(email) = lower($1)', [email.trim()]))?.id;
}

/** A one-time sign-in link's token; valid for `ttlSec`, spent by its first use. */
export async function createLoginLink(db: Db, userId: string, ttlSec = LOGIN_LINK_TTL_SEC): Promise<string> {
  const token = randomToken(32);
  await db.query(
    `INSERT INTO login_links (token_hash, user_id, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))`,
    [sha256(token), userId, ttlSec],
  );
  return token;
}

export async function consumeLoginLink(db: Db, token: string): Promise<string> {
  const row = await db.one<{ userId: string }>(
    `UPDATE login_links SET used_at = now() WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()
     RETURNING user_id AS "userId"`,
    [sha256(token)],
  );
  if (!row) throw new AppError(401, 'Unauthorized', 'This sign-in link is invalid, expired or already used');
  return row.userId;
}

export interface Session {
  userId: string;
  csrfToken: string;
  expiresAt: Date;
}

export async function createSession(db: Db, userId: string): Promise<Session & { token: string }> {
  const token = randomToken(32);
  const csrfToken = randomToken(24);
  const row = await db.one<{ expiresAt: Date }>(
    `INSERT INTO sessions (token_hash, user_id, csrf_token, expires_at) VALUES ($1, $2, $3, now() + make_interval(secs => $4))
     RETURNING expires_at AS "expiresAt"`,
    [sha256(token), userId, csrfToken, SESSION_TTL_SEC],
  );
  // Expired sessions of anyone are cleared here rather than by a timer.
  await db.query('DELETE FROM sessions WHERE expires_at < now()');
  return { token, userId, csrfToken, expiresAt: row!.expiresAt };
}

export async function findSession(db: Queryable, token: string): Promise<Session | undefined> {
  const res = await db.query(
    `SELECT user_id AS "userId", csrf_token AS "csrfToken", expires_at AS "expiresAt" FROM sessions
     WHERE token_hash = $1 AND expires_at > now()`,
    [sha256(token)],
  );
  return res.rows[0];
}

export async function deleteSession(db: Db, token: string): Promise<void> {
  await db.query('DELETE FROM sessions WHERE token_hash = $1', [sha256(token)]);
}

export function csrfMatches(expected: string, given: unknown): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

export interface MembershipView {
  id: string;
  name: string;
  plan: string;
  role: string;
  retentionDays: number;
}

export async function userOrganizations(db: Db, userId: string): Promise<MembershipView[]> {
  return db.query(
    `SELECT o.id, o.name, o.plan, m.role, o.retention_days AS "retentionDays"
     FROM memberships m JOIN organizations o ON o.id = m.organization_id
     WHERE m.user_id = $1 ORDER BY o.created_at`,
    [userId],
  );
}
