// Browser sign-in for the web studio: passwords hashed with scrypt (memory-hard), one-time sign-in
// links printed by the admin CLI, and server-side sessions. Only hashes of tokens are stored.
import { normaliseEmail } from './email.js';
import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { Db, Queryable } from '../db/db.js';
import { AppError, badRequest, notFound } from '../errors.js';
import { randomToken } from '../ids.js';

const scrypt = (password: string, salt: Buffer, keylen: number, opts: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) => scryptCb(password, salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key))));

export interface ScryptParams {
  N: number;
  r: number;
  p: number;
}

// OWASP's floor for scrypt: N=2^17, r=8, p=1, i.e. 128 MiB and a fraction of a second per guess.
export const SCRYPT_PARAMS: Readonly<ScryptParams> = Object.freeze({ N: 1 << 17, r: 8, p: 1 });
const KEY_LEN = 32;
// Stored hashes name their own parameters; none of ours ever needed more than this, so a row that
// asks for more cannot make one sign-in allocate gigabytes.
const MAX_HASH_MEMORY = 256 * 1024 * 1024;

/** What OpenSSL allocates for these parameters (its V and B arrays), plus room for its own state. */
const maxmemFor = ({ N, r, p }: ScryptParams) => 128 * r * (N + p + 2) + (1 << 20);

export const MIN_PASSWORD_LENGTH = 10;
export const LOGIN_LINK_TTL_SEC = 15 * 60;
/** A sign-in link is a password that travels by chat or e-mail: it lives minutes, an hour at most. */
export const LOGIN_LINK_TTL_BOUNDS_SEC = { min: 60, max: 3600 } as const;

/** How studio sessions live and what their cookie is called. Behind https (PUBLIC_URL) the cookie is
 *  `Secure` and named with the `__Host-` prefix, which a browser accepts only from a secure origin,
 *  for the whole host (no Domain), Path=/; so no subdomain or plain-http page can plant or shadow it.
 *  Over http (a laptop) it keeps its plain name, which a browser would refuse with that prefix. */
export interface SessionPolicy {
  cookieName: string;
  secure: boolean;
  idleSec: number;
  absoluteSec: number;
}

export const SESSION_COOKIE = 'shorts_session';
export const SECURE_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;

export function sessionPolicy(config: {
  publicUrl?: string;
  sessionIdleTimeoutSec: number;
  sessionAbsoluteTimeoutSec: number;
}): SessionPolicy {
  const secure = config.publicUrl?.startsWith('https:') ?? false;
  return {
    cookieName: secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE,
    secure,
    idleSec: config.sessionIdleTimeoutSec,
    absoluteSec: config.sessionAbsoluteTimeoutSec,
  };
}

/** The Set-Cookie value that sets (or, with null, clears) the session cookie. */
export function sessionCookieHeader(policy: SessionPolicy, token: string | null): string {
  const parts = [`${policy.cookieName}=${token ?? ''}`, 'Path=/', 'HttpOnly', 'SameSite=Lax', `Max-Age=${token ? policy.absoluteSec : 0}`];
  if (policy.secure) parts.push('Secure');
  return parts.join('; ');
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** `scrypt$N$r$p$salt$key`, so the parameters can grow without breaking stored hashes. */
export async function hashPassword(password: string, params: ScryptParams = SCRYPT_PARAMS): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, KEY_LEN, { ...params, maxmem: maxmemFor(params) });
  return ['scrypt', params.N, params.r, params.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** The parameters a stored hash was made with; undefined when it is not one of ours. */
export function hashParams(stored: string): ScryptParams | undefined {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  const params = { N: Number(n), r: Number(r), p: Number(p) };
  if (scheme !== 'scrypt' || !salt || !key) return undefined;
  if (![params.N, params.r, params.p].every((v) => Number.isSafeInteger(v) && v >= 1)) return undefined;
  const powerOfTwo = params.N >= 2 && (params.N & (params.N - 1)) === 0;
  if (!powerOfTwo || params.p > 16 || maxmemFor(params) > MAX_HASH_MEMORY) return undefined;
  return params;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const params = hashParams(stored);
  if (!params) return false;
  const [, , , , salt, key] = stored.split('$');
  const expected = Buffer.from(key!, 'base64url');
  if (expected.length < 16) return false;
  const actual = await scrypt(password, Buffer.from(salt!, 'base64url'), expected.length, { ...params, maxmem: maxmemFor(params) });
  return timingSafeEqual(actual, expected);
}

const weakerThanCurrent = (p: ScryptParams) => p.N < SCRYPT_PARAMS.N || p.r < SCRYPT_PARAMS.r || p.p < SCRYPT_PARAMS.p;

// Spent on unknown e-mails too, so the answer time does not tell which addresses exist.
let decoyHash: Promise<string> | undefined;

/** Sets a user's password and ends every session and unused sign-in link they had: whoever knew
 *  the old password (or held a session made with it) is out. */
export async function setPassword(db: Db, userId: string, password: string): Promise<{ sessionsEnded: number }> {
  if (password.length < MIN_PASSWORD_LENGTH) throw badRequest(`A password needs at least ${MIN_PASSWORD_LENGTH} characters`);
  const hash = await hashPassword(password);
  return db.tx(async (c) => {
    const res = await c.query('UPDATE users SET password_hash = $2 WHERE id = $1', [userId, hash]);
    if (!res.rowCount) throw notFound('User not found');
    await c.query('DELETE FROM login_links WHERE user_id = $1 AND used_at IS NULL', [userId]);
    return { sessionsEnded: (await c.query('DELETE FROM sessions WHERE user_id = $1', [userId])).rowCount ?? 0 };
  });
}

const badCredentials = () => new AppError(401, 'Unauthorized', 'Wrong e-mail or password');

/** The user's id when the e-mail and password match; one answer for every mismatch. */
export async function checkPassword(db: Db, email: string, password: string): Promise<string> {
  const row = await db.one<{ id: string; hash: string | null }>('SELECT id, password_hash AS hash FROM users WHERE email = $1', [
    normaliseEmail(email),
  ]);
  if (!row?.hash) {
    decoyHash ??= hashPassword(randomToken(12));
    await verifyPassword(password, await decoyHash);
    throw badCredentials();
  }
  if (!(await verifyPassword(password, row.hash))) throw badCredentials();
  // The password is known only now: a hash made with older, weaker parameters is replaced. The
  // old value in the WHERE keeps a password changed meanwhile from being overwritten.
  const params = hashParams(row.hash);
  if (params && weakerThanCurrent(params)) {
    await db.query('UPDATE users SET password_hash = $3 WHERE id = $1 AND password_hash = $2', [
      row.id,
      row.hash,
      await hashPassword(password),
    ]);
  }
  return row.id;
}

export async function findUserIdByEmail(db: Db, email: string): Promise<string | undefined> {
  return (await db.one<{ id: string }>('SELECT id FROM users WHERE email = $1', [normaliseEmail(email)]))?.id;
}

/** A one-time sign-in link's token; valid for `ttlSec` (bounded), spent by its first use. Issuing
 *  one revokes the user's earlier unused links: only the newest one printed works. */
export async function createLoginLink(db: Db, userId: string, ttlSec = LOGIN_LINK_TTL_SEC): Promise<string> {
  const { min, max } = LOGIN_LINK_TTL_BOUNDS_SEC;
  if (!Number.isInteger(ttlSec) || ttlSec < min || ttlSec > max) throw badRequest(`A sign-in link lives from ${min} to ${max} seconds`);
  const token = randomToken(32);
  await db.tx(async (c) => {
    await c.query('DELETE FROM login_links WHERE user_id = $1 AND used_at IS NULL', [userId]);
    await c.query(`INSERT INTO login_links (token_hash, user_id, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))`, [
      sha256(token),
      userId,
      ttlSec,
    ]);
  });
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

/** A session ends at `expiresAt` (its absolute lifetime from sign-in) or after `policy.idleSec` unused. */
export async function createSession(
  db: Db,
  userId: string,
  policy: Pick<SessionPolicy, 'idleSec' | 'absoluteSec'>,
): Promise<Session & { token: string }> {
  const token = randomToken(32);
  const csrfToken = randomToken(24);
  const row = await db.one<{ expiresAt: Date }>(
    `INSERT INTO sessions (token_hash, user_id, csrf_token, expires_at, last_seen_at) VALUES ($1, $2, $3, now() + make_interval(secs => $4), now())
     RETURNING expires_at AS "expiresAt"`,
    [sha256(token), userId, csrfToken, policy.absoluteSec],
  );
  // Ended sessions of anyone are cleared here rather than by a timer.
  await db.query('DELETE FROM sessions WHERE expires_at < now() OR last_seen_at < now() - make_interval(secs => $1)', [policy.idleSec]);
  return { token, userId, csrfToken, expiresAt: row!.expiresAt };
}

/** The live session of a token, its idle clock restarted. The restart is written at most every
 *  minute (or quarter of the idle timeout), not on every request. */
export async function findSession(db: Queryable, token: string, policy: Pick<SessionPolicy, 'idleSec'>): Promise<Session | undefined> {
  const hash = sha256(token);
  const res = await db.query<Session & { stale: boolean }>(
    `SELECT user_id AS "userId", csrf_token AS "csrfToken", expires_at AS "expiresAt",
            last_seen_at < now() - make_interval(secs => LEAST(60, $2 / 4.0)) AS stale
     FROM sessions
     WHERE token_hash = $1 AND expires_at > now() AND last_seen_at > now() - make_interval(secs => $2)`,
    [hash, policy.idleSec],
  );
  const row = res.rows[0];
  if (!row) return undefined;
  if (row.stale) await db.query('UPDATE sessions SET last_seen_at = now() WHERE token_hash = $1', [hash]);
  return { userId: row.userId, csrfToken: row.csrfToken, expiresAt: row.expiresAt };
}

export async function deleteSession(db: Db, token: string): Promise<void> {
  await db.query('DELETE FROM sessions WHERE token_hash = $1', [sha256(token)]);
}

/** Sign out everywhere: every session of the user ends. */
export async function deleteUserSessions(db: Db, userId: string): Promise<number> {
  return (await db.pool.query('DELETE FROM sessions WHERE user_id = $1', [userId])).rowCount ?? 0;
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
  return db.query<MembershipView>(
    `SELECT o.id, o.name, o.plan, m.role, o.retention_days AS "retentionDays"
     FROM memberships m JOIN organizations o ON o.id = m.organization_id
     WHERE m.user_id = $1 ORDER BY o.created_at`,
    [userId],
  );
}
