import test, { type ExecutionContext } from 'ava';
import Koa from 'koa';
import http from 'node:http';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { createUser } from '../coordinator/src/tenancy/tenancy.js';
import { hashPassword } from '../coordinator/src/tenancy/sessions.js';
import { FAILURES_PER_HOUR } from '../coordinator/src/tenancy/sign-in-guard.js';
import { applyTrustProxy, parseTrustProxy } from '../coordinator/src/api/client-address.js';
import { loadConfig } from '../coordinator/src/config.js';
import type { Parsed } from './helpers/parsed.js';

// Who a request comes from (TRUST_PROXY) and how far password guessing goes: forged
// X-Forwarded-For must not buy a fresh per-address bucket, 100 failed sign-ins an hour lock an
// account, and password hashes do not take over libuv's thread pool.
let direct: TestCluster;
let behindProxy: TestCluster;

test.before(async () => {
  [direct, behindProxy] = await Promise.all([
    startCluster('sign_in_direct', { signInHashConcurrency: 1, signInHashQueue: 4 }),
    startCluster('sign_in_proxied', { trustProxy: '1' }),
  ]);
});
test.after.always(() => Promise.all([direct?.close(), behindProxy?.close()]));

type Answer = { status: number; body: Parsed; retryAfter: string | null };
async function signIn(c: TestCluster, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(c.app.httpUrl + '/api/session', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json(), retryAfter: res.headers.get('retry-after') };
}
/** A sign-in link token that matches nothing: refused cheaply (no password hash), but counted per address. */
const garbageLink = (i: number) => ({ token: `not-a-link-${i}` });

/** Sixty sign-ins a minute per address, refilled one a second while the requests ran. */
function withinPerAddressLimit(t: ExecutionContext, statuses: number[], startedMs: number): void {
  const admitted = statuses.filter((s) => s !== 429).length;
  const refills = Math.ceil((Date.now() - startedMs) / 1000) + 1;
  t.true(statuses.includes(429), `the per-address limit (60 a minute) holds: ${statuses.join(',')}`);
  t.true(admitted <= 60 + refills, `${admitted} of ${statuses.length} admitted in ${Date.now() - startedMs} ms: ${statuses.join(',')}`);
}

test.serial('without TRUST_PROXY a forged X-Forwarded-For does not escape the per-address sign-in limit', async (t) => {
  const started = Date.now();
  const seen: number[] = [];
  for (let i = 0; i < 70; i++) {
    const a = await signIn(direct, garbageLink(i), {
      'x-forwarded-for': `198.51.100.${i}`,
      'x-real-ip': `198.51.100.${i}`,
      forwarded: `for=198.51.100.${i}`,
    });
    seen.push(a.status);
  }
  withinPerAddressLimit(t, seen, started);
  const keys = (await direct.app.db.query<{ key: string }>("SELECT key FROM rate_buckets WHERE key LIKE 'signin:ip:%'")).map((r) => r.key);
  t.false(
    keys.some((k) => k.includes('198.51.100.')),
    `forwarded addresses are not believed: ${keys.join(', ')}`,
  );
});

test.serial('with TRUST_PROXY=1 the address the proxy appended counts, not what the client wrote before it', async (t) => {
  const client = '203.0.113.10';
  const started = Date.now();
  const seen: number[] = [];
  for (let i = 0; i < 70; i++) {
    // The client forges the left part; the one proxy appends the address it saw.
    const a = await signIn(behindProxy, garbageLink(i), { 'x-forwarded-for': `10.9.${i}.1, 192.0.2.${i}, ${client}` });
    seen.push(a.status);
  }
  withinPerAddressLimit(t, seen, started);
  // Another client behind the same proxy has its own bucket, even when it forges the first's address.
  const other = await signIn(behindProxy, garbageLink(999), { 'x-forwarded-for': `${client}, 203.0.113.20` });
  t.is(other.status, 401);
  const keys = (
    await behindProxy.app.db.query<{ key: string }>("SELECT key FROM rate_buckets WHERE key LIKE 'signin:ip:%' ORDER BY key")
  ).map((r) => r.key);
  t.deepEqual(keys, ['signin:ip:203.0.113.10', 'signin:ip:203.0.113.20']);
});

test.serial(
  `the ${FAILURES_PER_HOUR + 1}st sign-in to an account after ${FAILURES_PER_HOUR} failures in an hour is refused, right password included`,
  async (t) => {
    const { org } = await behindProxy.org({ plan: 'pro' });
    const email = `locked${Math.random().toString(36).slice(2)}@limits.test`;
    const user = await createUser(behindProxy.app.db, { email, organizationId: org.id, role: 'owner' });
    // Cheap parameters, so a hundred wrong guesses take seconds, not a minute of scrypt.
    await behindProxy.app.db.query('UPDATE users SET password_hash = $2 WHERE id = $1', [
      user.id,
      await hashPassword('the right password', { N: 1024, r: 8, p: 1 }),
    ]);
    const from = (i: number) => ({ 'x-forwarded-for': `198.18.${Math.floor(i / 200)}.${i % 200}` });
    // The per-minute buckets (10 an e-mail) are emptied as the hour would: this checks the hourly count.
    const forgetMinuteBuckets = () => behindProxy.app.db.query("DELETE FROM rate_buckets WHERE key LIKE 'signin:%'");

    for (let i = 0; i < FAILURES_PER_HOUR - 4; i++) {
      if (i % 9 === 0) await forgetMinuteBuckets();
      const a = await signIn(behindProxy, { email, password: `guess ${i}` }, from(i));
      if (a.status !== 401) return t.fail(`attempt ${i + 1} answered ${a.status} ${JSON.stringify(a.body)}`);
    }
    // Eight at once with four failures left: exactly four are judged (wrong), four refused, on any coordinator.
    await forgetMinuteBuckets();
    const burst = await Promise.all(
      Array.from({ length: 8 }, (_, i) => signIn(behindProxy, { email, password: `burst ${i}` }, from(500 + i))),
    );
    t.deepEqual(burst.map((a) => a.status).sort(), [401, 401, 401, 401, 429, 429, 429, 429]);

    await forgetMinuteBuckets();
    const locked = await signIn(behindProxy, { email: email.toUpperCase(), password: 'the right password' }, from(900));
    t.is(locked.status, 429);
    t.is(locked.body.error, 'Too Many Requests');
    t.regex(locked.body.message, /Too many failed sign-ins to this account/);
    const retryAfter = Number(locked.retryAfter);
    t.true(retryAfter > 3000 && retryAfter <= 3600, `Retry-After ${locked.retryAfter} runs to the end of the hour`);
    t.is(
      (await behindProxy.app.db.one<{ failures: number }>('SELECT failures FROM sign_in_failures WHERE account = $1', [email]))!.failures,
      FAILURES_PER_HOUR,
    );

    // Once the hour has passed, the right password signs in again.
    await behindProxy.app.db.query("UPDATE sign_in_failures SET window_started_at = now() - interval '61 minutes' WHERE account = $1", [
      email,
    ]);
    t.is((await signIn(behindProxy, { email, password: 'the right password' }, from(901))).status, 200);
  },
);

test.serial(
  'Unicode spellings of a locked address neither sidestep the lock nor reach the account, and share its per-minute bucket',
  async (t) => {
    const { org } = await behindProxy.org({ plan: 'pro' });
    const local = `alice${Math.random().toString(36).slice(2, 8)}`;
    const email = `${local}@limits.test`;
    // Stored in its one normal form, whatever spelling the account was made with.
    const user = await createUser(behindProxy.app.db, { email: `  ${local.replace('a', '\uff21')}@LIMITS.test `, organizationId: org.id });
    t.is((await behindProxy.app.db.one<{ email: string }>('SELECT email FROM users WHERE id = $1', [user.id]))!.email, email);
    await behindProxy.app.db.query('UPDATE users SET password_hash = $2 WHERE id = $1', [
      user.id,
      await hashPassword('the right password', { N: 1024, r: 8, p: 1 }),
    ]);
    const from = (i: number) => ({ 'x-forwarded-for': `198.20.0.${i}` });
    const forgetMinuteBuckets = () => behindProxy.app.db.query("DELETE FROM rate_buckets WHERE key LIKE 'signin:%'");

    // Spellings of the same address: full-width letters (NFKC), upper case, the dotted capital I
    // (JavaScript lower-cases it to i + U+0307, a C.UTF-8 Postgres to i), the Kelvin sign as K.
    const variants = [
      email.toUpperCase(),
      email.replace(/[a-z]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 0x61 + 0xff41)),
      email.replace(/i/g, '\u0130'),
      email.replace('l', '\u217c'),
    ];
    // Ten wrong guesses a minute per address, however it is spelt.
    await forgetMinuteBuckets();
    const perMinute = [];
    for (let i = 0; i < 11; i++)
      perMinute.push((await signIn(behindProxy, { email: variants[i % 2]!, password: `guess ${i}` }, from(i))).status);
    t.deepEqual(perMinute, [...Array(10).fill(401), 429]);

    // The hour's failures spent: no spelling signs in with the right password.
    await behindProxy.app.db.query(
      `INSERT INTO sign_in_failures (account, window_started_at, failures) VALUES ($1, now(), $2)
     ON CONFLICT (account) DO UPDATE SET window_started_at = now(), failures = $2`,
      [email, FAILURES_PER_HOUR],
    );
    for (const [i, variant] of variants.entries()) {
      await forgetMinuteBuckets();
      const a = await signIn(behindProxy, { email: variant, password: 'the right password' }, from(100 + i));
      t.not(a.status, 200, `${JSON.stringify(variant)} signed in past the lock`);
      // A spelling that normalises to the address is the locked account; one that does not (the dotted
      // I lower-cases to i + U+0307) is another address, which no account has.
      t.is(a.status, variant.includes('\u0130') ? 401 : 429, `${JSON.stringify(variant)}: ${JSON.stringify(a.body)}`);
    }
  },
);

test.serial('a right password gives its attempt back: a user who signs in often is never locked out', async (t) => {
  const { org } = await behindProxy.org({ plan: 'pro' });
  const email = `often${Math.random().toString(36).slice(2)}@limits.test`;
  const user = await createUser(behindProxy.app.db, { email, organizationId: org.id, role: 'owner' });
  await behindProxy.app.db.query('UPDATE users SET password_hash = $2 WHERE id = $1', [
    user.id,
    await hashPassword('the right password', { N: 1024, r: 8, p: 1 }),
  ]);
  t.is((await signIn(behindProxy, { email, password: 'wrong' }, { 'x-forwarded-for': '198.19.0.1' })).status, 401);
  for (let i = 0; i < 3; i++)
    t.is((await signIn(behindProxy, { email, password: 'the right password' }, { 'x-forwarded-for': '198.19.0.1' })).status, 200);
  t.is(
    (await behindProxy.app.db.one<{ failures: number }>('SELECT failures FROM sign_in_failures WHERE account = $1', [email]))!.failures,
    1,
  );
});

test.serial(
  'password hashes run one at a time (SIGN_IN_HASH_CONCURRENCY=1) with four waiting (SIGN_IN_HASH_QUEUE=4); beyond, 503 with Retry-After at once',
  async (t) => {
    await direct.app.db.query("DELETE FROM rate_buckets WHERE key LIKE 'signin:%'");
    const emails = Array.from({ length: 14 }, (_, i) => `nobody${i}-${Math.random().toString(36).slice(2)}@limits.test`);
    const answers = await Promise.all(emails.map((email) => signIn(direct, { email, password: 'guess' })));
    const statuses = answers.map((a) => a.status);
    t.true(
      statuses.every((s) => s === 401 || s === 503),
      statuses.join(','),
    );
    t.true(statuses.filter((s) => s === 401).length >= 5, `one running and four waiting are judged: ${statuses.join(',')}`);
    t.true(statuses.filter((s) => s === 503).length >= 1, `the rest are turned away: ${statuses.join(',')}`);
    for (const a of answers.filter((x) => x.status === 503)) {
      t.is(a.retryAfter, '1');
      t.like(a.body, { error: 'Service Unavailable', message: 'Too many sign-ins at once; retry in a second' });
    }
    // A sign-in turned away for load was never judged: it does not count against the account.
    const counted = await direct.app.db.query<{ account: string; failures: number }>(
      'SELECT account, failures FROM sign_in_failures WHERE account = ANY($1)',
      [emails],
    );
    t.is(counted.filter((r) => r.failures > 0).length, statuses.filter((s) => s === 401).length);
  },
);

test('TRUST_PROXY as a list: forwarded headers count only from those proxies, and the client is the rightmost address not theirs', async (t) => {
  const probe = async (trust: string, headers: Record<string, string>) => {
    const koa = new Koa();
    const mw = applyTrustProxy(koa, parseTrustProxy(trust));
    if (mw) koa.use(mw);
    koa.use((ctx) => {
      ctx.body = { ip: ctx.ip, protocol: ctx.protocol };
    });
    const handle = koa.callback();
    const server = http.createServer((req, res) => void handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as { port: number }).port}/`, { headers });
      return (await res.json()) as { ip: string; protocol: string };
    } finally {
      server.close();
    }
  };
  const forged = { 'x-forwarded-for': '198.51.100.7, 203.0.113.5, 10.1.2.3', 'x-forwarded-proto': 'https' };
  // The test talks to the server from 127.0.0.1: a trusted proxy here, 10.0.0.0/8 its own upstream proxy.
  t.deepEqual(await probe('127.0.0.1, 10.0.0.0/8', forged), { ip: '203.0.113.5', protocol: 'https' });
  t.deepEqual(await probe('127.0.0.1,10.0.0.0/8,203.0.113.0/24', forged), { ip: '198.51.100.7', protocol: 'https' });
  // From a peer that is not listed, nothing forwarded is believed.
  const untrusted = await probe('10.0.0.0/8', forged);
  t.regex(untrusted.ip, /^(::ffff:)?127\.0\.0\.1$/);
  t.is(untrusted.protocol, 'http');
  t.regex((await probe('', forged)).ip, /^(::ffff:)?127\.0\.0\.1$/, 'unset: headers ignored');
  t.is((await probe('2', forged)).ip, '203.0.113.5', 'two hops: the second address from the right');

  for (const bad of ['yes', '10.0.0.0/33', '10.0.0.1/8/2', 'proxy.internal', '11']) {
    t.throws(() => loadConfig({ grpcHost: '127.0.0.1' }, { TRUST_PROXY: bad }), { message: /^TRUST_PROXY: / }, bad);
  }
  t.deepEqual(loadConfig({ grpcHost: '127.0.0.1' }, { TRUST_PROXY: '2' }).trustProxy, { hops: 2 });
  t.is(loadConfig({ grpcHost: '127.0.0.1' }, {}).trustProxy, undefined);
});
