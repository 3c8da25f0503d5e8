import { z } from 'zod';
import { normaliseEmail } from '../tenancy/email.js';
import { unsupportedMediaType, type Api, type ApiContext } from './http.js';
import type { Coordinator } from '../context.js';
import { AppError, badRequest, forbidden, TooManyRequestsError } from '../errors.js';
import { principalOf } from './auth-context.js';
import { readCookie } from '../tenancy/auth.js';
import { getUser } from '../tenancy/tenancy.js';
import {
  checkPassword,
  consumeLoginLink,
  createSession,
  deleteSession,
  deleteUserSessions,
  findSession,
  sessionCookieHeader,
  sessionPolicy,
  userOrganizations,
  type SessionPolicy,
} from '../tenancy/sessions.js';
import { sessionViewSchema, signedOutEverywhereSchema, signedOutSchema } from '@shorts/common/api/sessions';
import { EXAMPLE_ORG } from './organization-settings.js';

const signInSchema = z.object({
  email: z.string().max(320).optional(),
  password: z.string().max(1000).optional(),
  token: z.string().max(200).optional(),
});

const EXAMPLE_SESSION = {
  user: { id: '2e8f6a40-7c1b-4d39-9e2a-5b4c3d2e1f00', email: 'creator@acme.example', name: 'Robin Creator' },
  organizations: [{ ...EXAMPLE_ORG, role: 'owner', retentionDays: 30 }],
  csrfToken: 'k3Jx9v…Q2w',
};

// Written by hand rather than with ctx.cookies: behind a TLS-terminating proxy the request this
// process sees is plain http, and Koa refuses to send a Secure cookie over it.
function setSessionCookie(ctx: ApiContext, policy: SessionPolicy, value: string | null): void {
  ctx.append('Set-Cookie', sessionCookieHeader(policy, value));
}

async function describe(app: Coordinator, userId: string, csrfToken: string) {
  const user = await getUser(app.db.pool, userId);
  if (!user) throw new AppError(401, 'Unauthorized', 'Unauthorized');
  return { user: { id: user.id, email: user.email, name: user.name }, organizations: await userOrganizations(app.db, userId), csrfToken };
}

// Guessing is slowed three times over: scrypt makes each try cost, these buckets (shared by all
// coordinators, per minute) cap the tries per address and per e-mail, and the sign-in guard caps
// failures per account per hour (tenancy/sign-in-guard.ts). The address is the client's as far as
// TRUST_PROXY lets forwarded headers say (api/client-address.ts).
const SIGN_INS_PER_MINUTE_PER_IP = 60;
const SIGN_INS_PER_MINUTE_PER_EMAIL = 10;

async function throttleSignIn(app: Coordinator, ctx: ApiContext, email: string | undefined): Promise<void> {
  const buckets: Array<[string, number]> = [[`signin:ip:${ctx.ip}`, SIGN_INS_PER_MINUTE_PER_IP]];
  if (email) buckets.push([`signin:email:${normaliseEmail(email)}`, SIGN_INS_PER_MINUTE_PER_EMAIL]);
  for (const [key, limit] of buckets) {
    const decision = await app.rateLimiter.take(key, limit);
    if (decision.retryAfterSec > 0) {
      ctx.set('Retry-After', String(decision.retryAfterSec));
      throw new TooManyRequestsError(`Too many sign-in attempts; retry in ${decision.retryAfterSec} s`, decision.retryAfterSec);
    }
  }
}

/**
 * Login CSRF: a page on another site must not sign the visitor's browser into the attacker's
 * account (whose uploads and drafts the victim would then fill). Browsers say where a request comes
 * from; clients that are not browsers send neither header and are let through.
 */
function refuseCrossSite(app: Coordinator, ctx: ApiContext): void {
  const refused = () => forbidden("Sign in from the studio's own page: requests from other sites are refused", 'Forbidden');
  if (ctx.get('sec-fetch-site').toLowerCase() === 'cross-site') throw refused();
  const origin = ctx.get('origin');
  if (!origin) return;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    throw refused(); // "null" (sandboxed frames, opaque origins) included
  }
  const publicHost = app.config.publicUrl ? new URL(app.config.publicUrl).host : undefined;
  if (host.toLowerCase() !== ctx.host.toLowerCase() && host !== publicHost) throw refused();
}

/** The web studio's sign-in. The REST API's keys and bearer tokens are untouched by it. */
export function registerSessionRoutes(api: Api, app: Coordinator): void {
  const policy = sessionPolicy(app.config);
  api.route(
    {
      method: 'post',
      path: '/api/session',
      // Wrong credentials; a cross-site sign-in; too many hashes waiting.
      errors: [401, 403, 503],
      tag: 'Studio sessions',
      auth: false,
      summary: 'Sign in to the web studio with an e-mail and password, or a one-time link token from the admin CLI',
      description:
        'Sets an HttpOnly, SameSite=Lax session cookie (`Secure` and named `__Host-shorts_session` when the service is served over https, else `shorts_session`). ' +
        'The session ends after the idle timeout unused or at its absolute lifetime, whichever comes first, and when the password changes. ' +
        'Requests made with the cookie that change state must send the returned `csrfToken` in `X-CSRF-Token`.',
      body: signInSchema,
      bodyExample: { email: 'creator@acme.example', password: 'a long studio password' },
      response: sessionViewSchema,
      example: EXAMPLE_SESSION,
    },
    async (ctx, { body }) => {
      refuseCrossSite(app, ctx);
      // A cross-site <form enctype="text/plain"> can post JSON-looking text, never application/json;
      // nor may a body with no Content-Type sign anyone in (a no-preflight fetch can send one).
      if (!ctx.state.bodyTypedJson) throw unsupportedMediaType(ctx.get('content-type'));
      await throttleSignIn(app, ctx, body.token ? undefined : body.email);
      let userId: string;
      if (body.token) userId = await consumeLoginLink(app.db, body.token);
      else if (body.email && body.password) {
        const { email, password } = body;
        userId = await app.signInGuard.attempt(email, () => checkPassword(app.db, email, password));
      } else throw badRequest('Send email and password, or the token of a sign-in link');
      const session = await createSession(app.db, userId, policy);
      setSessionCookie(ctx, policy, session.token);
      app.log.info('studio sign-in', { userId, with: body.token ? 'link' : 'password' });
      return describe(app, userId, session.csrfToken);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/session',
      errors: [401],
      tag: 'Studio sessions',
      auth: false,
      summary: 'The signed-in user, their organizations and the CSRF token of this session',
      response: sessionViewSchema,
      example: EXAMPLE_SESSION,
    },
    async (ctx) => {
      const token = readCookie(ctx.headers.cookie, policy.cookieName);
      const session = token ? await findSession(app.db.pool, token, policy) : undefined;
      if (!session) throw new AppError(401, 'Unauthorized', 'Unauthorized');
      return describe(app, session.userId, session.csrfToken);
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/api/session',
      tag: 'Studio sessions',
      summary: 'Sign out: ends this session',
      response: signedOutSchema,
      example: { ok: true },
    },
    async (ctx) => {
      const principal = await principalOf(app, ctx);
      const token = readCookie(ctx.headers.cookie, policy.cookieName);
      if (principal.kind === 'user' && principal.via === 'session' && token) await deleteSession(app.db, token);
      setSessionCookie(ctx, policy, null);
      return { ok: true };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/api/sessions',
      tag: 'Studio sessions',
      summary: 'Sign out everywhere: ends every studio session of the signed-in user, in every browser',
      description:
        "With the session cookie (and `X-CSRF-Token`) or a user's bearer token. Bearer tokens themselves live until they expire; API keys have no sessions (403).",
      response: signedOutEverywhereSchema,
      example: { ok: true, sessionsEnded: 3 },
    },
    async (ctx) => {
      const principal = await principalOf(app, ctx);
      if (principal.kind !== 'user')
        throw forbidden('An API key has no studio sessions; sign out everywhere as the user (session or bearer token)', 'Forbidden');
      const sessionsEnded = await deleteUserSessions(app.db, principal.userId);
      if (principal.via === 'session') setSessionCookie(ctx, policy, null);
      app.log.info('studio sign-out everywhere', { userId: principal.userId, sessionsEnded });
      return { ok: true, sessionsEnded };
    },
  );
}
