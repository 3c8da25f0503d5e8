import { SignJWT, jwtVerify } from 'jose';
import type { Db } from '../db/db.js';
import { AppError, unauthorized } from '../errors.js';
import { findActiveApiKey, getUser, isMember, type User } from './tenancy.js';
import { csrfMatches, findSession, type SessionPolicy } from './sessions.js';

export const JWT_ISSUER = 'shorts-coordinator';

export type Principal =
  | { kind: 'apiKey'; keyId: string; organizationId: string }
  /** A bearer token, or the web studio's session cookie: both act as the user, in an organization they belong to. */
  | { kind: 'user'; userId: string; via: 'token' | 'session' };

export const CSRF_HEADER = 'x-csrf-token';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface TokenSigner {
  issue(userId: string, ttlSec?: number): Promise<string>;
  verify(token: string): Promise<string | undefined>;
}

export function createTokenSigner(secret: string): TokenSigner {
  const key = new TextEncoder().encode(secret);
  return {
    async issue(userId, ttlSec = 3600) {
      return new SignJWT({})
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer(JWT_ISSUER)
        .setSubject(userId)
        .setIssuedAt()
        .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSec)
        .sign(key);
    },
    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, key, { issuer: JWT_ISSUER, algorithms: ['HS256'] });
        return typeof payload.sub === 'string' ? payload.sub : undefined;
      } catch {
        return undefined;
      }
    },
  };
}

// A JWT is three base64url parts; an API key never is. Told apart by shape, never by a lookup.
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** The value of one cookie in a `Cookie` header. */
export function readCookie(header: string | string[] | undefined, name: string): string | undefined {
  for (const part of String(header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

/**
 * Reads `Authorization: Bearer …`, `X-API-Key`, or else the studio's session cookie; 401 when
 * missing or invalid. A cookie rides along on any request the browser makes, so with the cookie a
 * state-changing method must also carry the session's CSRF token in `X-CSRF-Token`, which a page
 * of another origin cannot read.
 */
export async function authenticate(
  db: Db,
  signer: TokenSigner,
  sessions: SessionPolicy,
  headers: Record<string, string | string[] | undefined>,
  method = 'GET',
): Promise<Principal> {
  const header = headers['authorization'];
  const apiKeyHeader = headers['x-api-key'];
  let credential: string | undefined;
  if (typeof header === 'string' && /^bearer\s+/i.test(header)) credential = header.replace(/^bearer\s+/i, '').trim();
  else if (typeof apiKeyHeader === 'string') credential = apiKeyHeader.trim();
  if (!credential) {
    const cookie = readCookie(headers['cookie'], sessions.cookieName);
    const session = cookie ? await findSession(db.pool, cookie, sessions) : undefined;
    if (!session) throw unauthorized();
    if (!SAFE_METHODS.has(method.toUpperCase()) && !csrfMatches(session.csrfToken, headers[CSRF_HEADER])) {
      throw new AppError(403, 'Forbidden', 'Missing or wrong X-CSRF-Token header for this session');
    }
    return { kind: 'user', userId: session.userId, via: 'session' };
  }

  if (JWT_SHAPE.test(credential)) {
    const userId = await signer.verify(credential);
    if (!userId) throw unauthorized();
    return { kind: 'user', userId, via: 'token' };
  }
  const key = await findActiveApiKey(db, credential);
  if (!key) throw unauthorized();
  return { kind: 'apiKey', keyId: key.id, organizationId: key.organizationId };
}

/** How a route group words a missing organizationId (the contract differs per group). */
export interface OrganizationMessages {
  missing: AppError;
  mismatch: AppError;
  notMember: AppError;
}

export const DEFAULT_ORG_MESSAGES: OrganizationMessages = {
  missing: new AppError(400, 'Bad Request', 'organizationId is required when not using an API key'),
  mismatch: new AppError(403, 'Forbidden', 'Organization ID mismatch: the API key is bound to a different organization'),
  notMember: new AppError(403, 'Not allowed', 'Not allowed'),
};

/** Section 5: a key implies its organization (another id is 403); other auth must name one it belongs to. */
export async function resolveOrganization(
  db: Db,
  principal: Principal,
  suppliedOrganizationId: unknown,
  messages: OrganizationMessages = DEFAULT_ORG_MESSAGES,
): Promise<string> {
  const supplied = typeof suppliedOrganizationId === 'string' && suppliedOrganizationId !== '' ? suppliedOrganizationId : undefined;
  if (principal.kind === 'apiKey') {
    if (supplied !== undefined && supplied !== principal.organizationId) throw messages.mismatch;
    return principal.organizationId;
  }
  if (!supplied) throw messages.missing;
  if (!(await isMember(db.pool, principal.userId, supplied))) throw messages.notMember;
  return supplied;
}

export async function principalUser(db: Db, principal: Principal): Promise<User | undefined> {
  return principal.kind === 'user' ? getUser(db.pool, principal.userId) : undefined;
}
