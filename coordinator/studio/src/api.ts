// The studio talks to the same REST routes as any client, with the session cookie. Requests that
// change state carry the session's CSRF token; every request names the organization it acts for.

import type { SessionOrganization, SessionView, SignedOutEverywhere } from '@shorts/common/api/sessions';

export type Organization = SessionOrganization;
export type SessionInfo = SessionView;

/** An error as the API worded it: `message` is shown to the person as is. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    message: string,
    readonly body: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

let csrfToken = '';
let organizationId = '';
let plan = '';

export function useSession(session: SessionInfo, orgId: string): void {
  csrfToken = session.csrfToken;
  organizationId = orgId;
  plan = session.organizations.find((o) => o.id === orgId)?.plan ?? '';
}
export const currentOrgId = () => organizationId;
export const currentPlan = () => plan;
export const csrf = () => csrfToken;

/** The JSON body of an answer, as `T` (the server's schema for that route, from @shorts/common/api);
 *  an error answer becomes an ApiError with the API's own words. */
async function parse<T>(res: Response): Promise<T> {
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!res.ok) {
    const fields = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
    const error = typeof fields.error === 'string' ? fields.error : undefined;
    const message = typeof fields.message === 'string' ? fields.message : (error ?? `${res.status} ${res.statusText}`);
    throw new ApiError(res.status, error ?? String(res.status), message, fields);
  }
  return body as T;
}

type Query = Record<string, string | number | undefined | null>;

/** A request to the REST API; `T` names the answer's type (from @shorts/common/api, where the
 *  server's route documents it), so every call says what it reads. */
export async function api<T>(
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  opts: { query?: Query; body?: Record<string, unknown>; org?: boolean } = {},
): Promise<T> {
  const withOrg = opts.org !== false && organizationId;
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined && v !== null && v !== '') query.set(k, String(v));
  // PATCH routes (transcript corrections) take the organization in the query, as GET and DELETE do.
  if (withOrg && (method === 'GET' || method === 'DELETE' || method === 'PATCH')) query.set('organizationId', organizationId);
  const headers: Record<string, string> = {};
  let body: string | undefined;
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  if (method === 'POST' || method === 'PUT') {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(withOrg ? { ...opts.body, organizationId } : (opts.body ?? {}));
  } else if (method === 'PATCH') {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.body ?? {});
  }
  const qs = query.toString();
  const res = await fetch(path + (qs ? `?${qs}` : ''), { method, headers, body, credentials: 'same-origin' });
  return parse<T>(res);
}

/** A GET route's address with the organization (and `query`) in it, for a plain link: a download the
 *  browser makes itself, with the session cookie (a GET needs no CSRF token). */
export function hrefOf(path: string, query: Query = {}): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') qs.set(k, String(v));
  if (organizationId) qs.set('organizationId', organizationId);
  const text = qs.toString();
  return text ? `${path}?${text}` : path;
}

export async function loadSession(): Promise<SessionInfo | null> {
  const res = await fetch('/api/session', { credentials: 'same-origin' });
  if (res.status === 401) return null;
  return parse<SessionInfo>(res);
}

export async function signIn(body: { email: string; password: string } | { token: string }): Promise<SessionInfo> {
  return parse<SessionInfo>(
    await fetch('/api/session', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      credentials: 'same-origin',
    }),
  );
}

export async function signOut(): Promise<void> {
  await fetch('/api/session', { method: 'DELETE', headers: { 'x-csrf-token': csrfToken }, credentials: 'same-origin' });
}

/** Ends every session of this user, in every browser (a lost laptop, a shared computer). */
export async function signOutEverywhere(): Promise<void> {
  await parse<SignedOutEverywhere>(
    await fetch('/api/sessions', { method: 'DELETE', headers: { 'x-csrf-token': csrfToken }, credentials: 'same-origin' }),
  );
}

/** A job's stage as the API names it (`stage`: what a PROCESSING job does or why it waits), or its
 *  finished status. */
export const stageOf = (job: { status: string | null; stage?: string }): string => job.stage ?? (job.status ?? 'unknown').toLowerCase();

export const mb = (bytes: number) =>
  bytes < 100_000 ? `${(bytes / 1000).toFixed(1)} kB` : `${(bytes / 1_000_000).toFixed(bytes < 10_000_000 ? 2 : 1)} MB`;
export const seconds = (s: number) => {
  const m = Math.floor(s / 60);
  const rest = s - m * 60;
  return `${m}:${rest.toFixed(1).padStart(4, '0')}`;
};
