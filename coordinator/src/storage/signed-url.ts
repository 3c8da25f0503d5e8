import { createHmac, timingSafeEqual } from 'node:crypto';

// Time-limited URLs for the coordinator's /objects route: HMAC-SHA256 over method, key and expiry,
// and for an upload also the task, lease and byte limit it was granted for.

/** What an upload URL is good for: one object of one task, while one lease of it lasts, up to a size. */
export interface UploadGrant {
  taskId: string;
  /** Names the lease (a digest of its token, never the token): a re-leased task has another. */
  lease: string;
  maxBytes: number;
}

const mac = (secret: string, method: string, key: string, exp: number, grant?: UploadGrant) =>
  createHmac('sha256', secret)
    .update(`${method}\n${key}\n${exp}${grant ? `\n${grant.taskId}\n${grant.lease}\n${grant.maxBytes}` : ''}`)
    .digest('base64url');

const encodeKey = (key: string) => key.split('/').map(encodeURIComponent).join('/');

export function signObjectUrl(
  baseUrl: string,
  key: string,
  opts: { method: 'GET'; expiresAt: Date; secret: string } | { method: 'PUT'; expiresAt: Date; secret: string; grant: UploadGrant },
): string {
  const exp = Math.floor(opts.expiresAt.getTime() / 1000);
  const grant = opts.method === 'PUT' ? opts.grant : undefined;
  const sig = mac(opts.secret, opts.method, key, exp, grant);
  const bound = grant ? `&task=${encodeURIComponent(grant.taskId)}&lease=${encodeURIComponent(grant.lease)}&max=${grant.maxBytes}` : '';
  return `${baseUrl.replace(/\/$/, '')}/objects/${encodeKey(key)}?exp=${exp}${bound}&sig=${sig}`;
}

export type SignatureCheck = 'ok' | 'expired' | 'invalid';

type Query = Record<string, string | string[] | undefined>;
const one = (v: string | string[] | undefined) => (typeof v === 'string' ? v : undefined);

/** Checks a request's signature; an upload's grant comes back with it. A PUT signed without a grant
 *  (or a GET signature used for a PUT) is invalid. */
export function verifyObjectSignature(
  key: string,
  method: string,
  query: Query,
  secret: string,
  now = Date.now(),
): { check: SignatureCheck; grant?: UploadGrant } {
  const exp = one(query.exp);
  const sig = one(query.sig);
  if (!exp || !sig || !/^\d+$/.test(exp)) return { check: 'invalid' };
  let grant: UploadGrant | undefined;
  if (method === 'PUT') {
    const taskId = one(query.task);
    const lease = one(query.lease);
    const max = one(query.max);
    if (!taskId || !lease || !max || !/^\d{1,16}$/.test(max)) return { check: 'invalid' };
    grant = { taskId, lease, maxBytes: Number(max) };
  }
  // HEAD reads what GET would; it shares GET's signature.
  const signedMethod = method === 'HEAD' ? 'GET' : method;
  const want = Buffer.from(mac(secret, signedMethod, key, Number(exp), grant));
  const given = Buffer.from(sig);
  if (want.length !== given.length || !timingSafeEqual(want, given)) return { check: 'invalid' };
  return { check: Number(exp) * 1000 < now ? 'expired' : 'ok', grant };
}
