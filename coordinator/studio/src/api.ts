// The studio talks to the same REST routes as any client, with the session cookie. Requests that
// change state carry the session's CSRF token; every request names the organization it acts for.

export interface Organization { id: string; name: string; plan: string; role: string; retentionDays: number }
export interface SessionInfo {
  user: { id: string; email: string; name: string | null };
  organizations: Organization[];
  csrfToken: string;
}

/** An error as the API worded it: `message` is shown to the person as is. */
export class ApiError extends Error {
  constructor(readonly status: number, readonly error: string, message: string, readonly body: Record<string, unknown> = {}) {
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

async function parse(res: Response): Promise<any> {
  const text = await res.text();
  let body: any = undefined;
  try { body = text ? JSON.parse(text) : undefined; } catch { body = undefined; }
  if (!res.ok) {
    const message = body?.message ?? body?.error ?? `${res.status} ${res.statusText}`;
    throw new ApiError(res.status, body?.error ?? String(res.status), message, body ?? {});
  }
  return body;
}

type Query = Record<string, string | number | undefined | null>;

export async function api<T = any>(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, opts: { query?: Query; body?: Record<string, unknown>; org?: boolean } = {}): Promise<T> {
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
    body = JSON.stringify(withOrg ? { ...opts.body, organizationId } : opts.body ?? {});
  } else if (method === 'PATCH') {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.body ?? {});
  }
  const qs = query.toString();
  const res = await fetch(path + (qs ? `?${qs}` : ''), { method, headers, body, credentials: 'same-origin' });
  return parse(res);
}

export async function loadSession(): Promise<SessionInfo | null> {
  const res = await fetch('/api/session', { credentials: 'same-origin' });
  if (res.status === 401) return null;
  return parse(res);
}

export async function signIn(body: { email: string; password: string } | { token: string }): Promise<SessionInfo> {
  return parse(await fetch('/api/session', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), credentials: 'same-origin' }));
}

export async function signOut(): Promise<void> {
  await fetch('/api/session', { method: 'DELETE', headers: { 'x-csrf-token': csrfToken }, credentials: 'same-origin' });
}

/** Ends every session of this user, in every browser (a lost laptop, a shared computer). */
export async function signOutEverywhere(): Promise<void> {
  await parse(await fetch('/api/sessions', { method: 'DELETE', headers: { 'x-csrf-token': csrfToken }, credentials: 'same-origin' }));
}

/** A job's stage as the API names it (`stage`: what a PROCESSING job does or why it waits), or its
 *  finished status. */
export const stageOf = (job: { status: string | null; stage?: string }): string => job.stage ?? (job.status ?? 'unknown').toLowerCase();

export const mb = (bytes: number) => (bytes < 100_000 ? `${(bytes / 1000).toFixed(1)} kB` : `${(bytes / 1_000_000).toFixed(bytes < 10_000_000 ? 2 : 1)} MB`);
export const seconds = (s: number) => {
  const m = Math.floor(s / 60);
  const rest = s - m * 60;
  return `${m}:${rest.toFixed(1).padStart(4, '0')}`;
};
