import { createHmac, timingSafeEqual } from 'node:crypto';

// Time-limited URLs for the coordinator's /objects route: HMAC-SHA256 over method, key and expiry.

const mac = (secret: string, method: string, key: string, exp: number) =>
  createHmac('sha256', secret).update(`${method}\n${key}\n${exp}`).digest('base64url');

const encodeKey = (key: string) => key.split('/').map(encodeURIComponent).join('/');

export function signObjectUrl(baseUrl: string, key: string, opts: { method: 'GET' | 'PUT'; expiresAt: Date; secret: string }): string {
  const exp = Math.floor(opts.expiresAt.getTime() / 1000);
  const sig = mac(opts.secret, opts.method, key, exp);
  return `${baseUrl.replace(/\/$/, '')}/objects/${encodeKey(key)}?exp=${exp}&sig=${sig}`;
}

export type SignatureCheck = 'ok' | 'expired' | 'invalid';

export function verifyObjectSignature(key: string, method: string, exp: string | undefined, sig: string | undefined, secret: string, now = Date.now()): SignatureCheck {
  if (!exp || !sig || !/^\d+$/.test(exp)) return 'invalid';
  // HEAD reads what GET would; it shares GET's signature.
  const signedMethod = method === 'HEAD' ? 'GET' : method;
  const want = Buffer.from(mac(secret, signedMethod, key, Number(exp)));
  const given = Buffer.from(sig);
  if (want.length !== given.length || !timingSafeEqual(want, given)) return 'invalid';
  return Number(exp) * 1000 < now ? 'expired' : 'ok';
}
