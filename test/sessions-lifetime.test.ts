import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { loadConfig } from '../coordinator/src/config.js';
import { createUser } from '../coordinator/src/tenancy/tenancy.js';
import { createLoginLink, setPassword } from '../coordinator/src/tenancy/sessions.js';
import { needing } from './helpers/requirements.js';
import { adminArgv, adminEnv, adminWithStdin } from './helpers/admin-cli.js';

// Studio sessions end when unused (idle timeout) and at their absolute lifetime, all at once when
// the password changes or the user signs out everywhere; behind https the cookie is Secure with the
// __Host- prefix; the admin CLI never takes a password in argv and keeps sign-in links short-lived.

let dev: TestCluster;
let secure: TestCluster;
let secureBase: string;
const PASSWORD = 'correct horse battery';

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = http.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

test.before(async () => {
  const port = await freePort();
  // The coordinator itself speaks http here, as it does behind a TLS-terminating proxy; PUBLIC_URL
  // says clients reach it over https.
  [dev, secure] = await Promise.all([
    startCluster('sessions_lifetime'),
    startCluster('sessions_https', { port, publicUrl: `https://127.0.0.1:${port}` }),
  ]);
  secureBase = `http://127.0.0.1:${port}`;
});
test.after.always(async () => {
  await Promise.all([dev?.close(), secure?.close()]);
});

/** A new user with a password in a new organization of the cluster. */
async function user(c: TestCluster) {
  const { org, key } = await c.org({ plan: 'pro' });
  const email = `u${Math.random().toString(36).slice(2)}@sessions.test`;
  const u = await createUser(c.app.db, { email, organizationId: org.id, role: 'owner' });
  await setPassword(c.app.db, u.id, PASSWORD);
  return { org, key, email, id: u.id };
}

/** Signs in as a browser would; returns the cookie it would send back and its CSRF token. */
async function signIn(base: string, body: unknown) {
  const res = await fetch(`${base}/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const setCookie = res.headers.getSetCookie();
  const json = (await res.json()) as { csrfToken?: string; message?: string };
  return {
    status: res.status,
    setCookie,
    cookie: setCookie.map((c) => c.split(';')[0]).join('; '),
    csrf: json.csrfToken ?? '',
    message: json.message,
  };
}

const whoAmI = async (base: string, cookie: string) => (await fetch(`${base}/api/session`, { headers: { cookie } })).status;

test.serial('a session unused for the idle timeout ends, one in use is kept alive, and none outlives its absolute lifetime', async (t) => {
  t.is(dev.app.config.sessionIdleTimeoutSec, 4 * 3600, 'over http the idle timeout is 4 h');
  t.is(dev.app.config.sessionAbsoluteTimeoutSec, 12 * 3600);
  const u = await user(dev);
  const [idle, busy, old] = [
    await signIn(dev.app.httpUrl, { email: u.email, password: PASSWORD }),
    await signIn(dev.app.httpUrl, { email: u.email, password: PASSWORD }),
    await signIn(dev.app.httpUrl, { email: u.email, password: PASSWORD }),
  ];
  t.regex(idle.setCookie[0]!, /Max-Age=43200/, 'the cookie lives as long as the session can');
  // Time passes (the database's clock decides): each session's last use moved back.
  const lastUsed = (interval: string, cookie: string) =>
    dev.app.db.query(
      `UPDATE sessions SET last_seen_at = now() - $2::interval WHERE user_id = $1 AND token_hash = encode(sha256(convert_to($3, 'UTF8')), 'hex')`,
      [u.id, interval, decodeURIComponent(cookie.split('=')[1]!)],
    );
  await lastUsed('4 hours 1 minute', idle.cookie);
  await lastUsed('3 hours 59 minutes', busy.cookie);
  t.is(await whoAmI(dev.app.httpUrl, idle.cookie), 401, 'unused past the idle timeout');
  t.is((await fetch(`${dev.app.httpUrl}/api/jobs?organizationId=${u.org.id}`, { headers: { cookie: idle.cookie } })).status, 401);
  t.is(await whoAmI(dev.app.httpUrl, busy.cookie), 200, 'used just inside the idle timeout');
  const idleFor = await dev.app.db.one<{ sec: number }>(
    `SELECT extract(epoch FROM now() - last_seen_at)::float8 AS sec FROM sessions WHERE token_hash = encode(sha256(convert_to($1, 'UTF8')), 'hex')`,
    [decodeURIComponent(busy.cookie.split('=')[1]!)],
  );
  t.true(idleFor!.sec < 60, `that use restarted its idle clock (${idleFor!.sec} s)`);

  // Used a minute ago, but signed in more than 12 h ago.
  await dev.app.db.query(
    `UPDATE sessions SET expires_at = now() - interval '1 second' WHERE token_hash = encode(sha256(convert_to($1, 'UTF8')), 'hex')`,
    [decodeURIComponent(old.cookie.split('=')[1]!)],
  );
  t.is(await whoAmI(dev.app.httpUrl, old.cookie), 401, 'past the absolute lifetime');
});

test.serial('behind https the cookie is Secure and named __Host-shorts_session; over http it keeps its name', async (t) => {
  const u = await user(secure);
  const s = await signIn(secureBase, { email: u.email, password: PASSWORD });
  t.is(s.status, 200, s.message);
  t.is(s.setCookie.length, 1);
  const cookie = s.setCookie[0]!;
  t.regex(cookie, /^__Host-shorts_session=[\w-]+; /);
  for (const attr of [/; Secure(;|$)/, /; HttpOnly(;|$)/, /; SameSite=Lax(;|$)/, /; Path=\/(;|$)/, /; Max-Age=43200(;|$)/])
    t.regex(cookie, attr);
  t.notRegex(cookie, /domain=/i, '__Host- cookies carry no Domain');
  t.is(secure.app.config.sessionIdleTimeoutSec, 30 * 60, 'production-like: 30 min idle');
  t.is(await whoAmI(secureBase, s.cookie), 200);
  // The plain name (which a page on plain http, or a subdomain, could set) is not read there.
  t.is(await whoAmI(secureBase, s.cookie.replace('__Host-shorts_session', 'shorts_session')), 401);

  const d = await user(dev);
  const plain = await signIn(dev.app.httpUrl, { email: d.email, password: PASSWORD });
  t.regex(plain.setCookie[0]!, /^shorts_session=[\w-]+; /);
  t.notRegex(plain.setCookie[0]!, /Secure/);
  t.is(await whoAmI(dev.app.httpUrl, plain.cookie), 200);

  // Signing out clears the cookie under the same name and attributes.
  const out = await fetch(`${secureBase}/api/session`, { method: 'DELETE', headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } });
  t.is(out.status, 200);
  t.regex(out.headers.getSetCookie()[0]!, /^__Host-shorts_session=; Path=\/; HttpOnly; SameSite=Lax; Max-Age=0; Secure$/);
  t.is(await whoAmI(secureBase, s.cookie), 401);
});

test.serial("sign out everywhere ends every session of the user, in every browser, and nobody else's", async (t) => {
  const u = await user(dev);
  const other = await user(dev);
  const laptop = await signIn(dev.app.httpUrl, { email: u.email, password: PASSWORD });
  const phone = await signIn(dev.app.httpUrl, { email: u.email, password: PASSWORD });
  const theirs = await signIn(dev.app.httpUrl, { email: other.email, password: PASSWORD });
  const everywhere = (headers: Record<string, string>) => fetch(`${dev.app.httpUrl}/api/sessions`, { method: 'DELETE', headers });

  const noCsrf = await everywhere({ cookie: laptop.cookie });
  t.is(noCsrf.status, 403, 'a cookie alone (a cross-site request) cannot sign anyone out');
  const byKey = await everywhere({ authorization: `Bearer ${u.key}` });
  t.is(byKey.status, 403);
  t.regex(((await byKey.json()) as { message: string }).message, /API key has no studio sessions/);
  t.is(await whoAmI(dev.app.httpUrl, phone.cookie), 200, 'refusals changed nothing');

  const res = await everywhere({ cookie: laptop.cookie, 'x-csrf-token': laptop.csrf });
  t.is(res.status, 200);
  t.deepEqual(await res.json(), { ok: true, sessionsEnded: 2 });
  t.regex(res.headers.getSetCookie()[0]!, /^shorts_session=; .*Max-Age=0/);
  t.is(await whoAmI(dev.app.httpUrl, laptop.cookie), 401);
  t.is(await whoAmI(dev.app.httpUrl, phone.cookie), 401);
  t.is(await whoAmI(dev.app.httpUrl, theirs.cookie), 200, 'another user keeps their session');
  t.is((await signIn(dev.app.httpUrl, { email: u.email, password: PASSWORD })).status, 200, 'signing in again works');

  // A user's bearer token may do it too (a script cleaning up after a lost device).
  const token = await dev.app.signer.issue(other.id);
  const viaToken = await everywhere({ authorization: `Bearer ${token}` });
  t.deepEqual(await viaToken.json(), { ok: true, sessionsEnded: 1 });
  t.is(await whoAmI(dev.app.httpUrl, theirs.cookie), 401);
});

/** The admin CLI as an operator runs it against the dev cluster's database. */
const admin = (args: string[], stdin?: string) => adminWithStdin(dev, args, stdin);

test.serial(
  'a password change ends every session and unused sign-in link of the user; the admin CLI reads it from stdin, never argv',
  async (t) => {
    const u = await user(dev);
    const a = await signIn(dev.app.httpUrl, { email: u.email, password: PASSWORD });
    const b = await signIn(dev.app.httpUrl, { email: u.email, password: PASSWORD });
    const link = await createLoginLink(dev.app.db, u.id);
    const hashBefore = (await dev.app.db.one<{ h: string }>('SELECT password_hash AS h FROM users WHERE id = $1', [u.id]))!.h;

    for (const args of [['--password', 'a new password 1'], ['--password=a new password 1']]) {
      const refused = await admin(['user', 'set-password', '--email', u.email, ...args, '--json']);
      t.is(refused.code, 1);
      t.regex(refused.stderr, /Passwords are not taken on the command line.*pipe the password on stdin/);
      t.false(refused.stderr.includes('a new password 1'), 'the password is not echoed back');
    }
    t.is(
      (await dev.app.db.one<{ h: string }>('SELECT password_hash AS h FROM users WHERE id = $1', [u.id]))!.h,
      hashBefore,
      'nothing changed',
    );
    t.is(await whoAmI(dev.app.httpUrl, a.cookie), 200);

    const changed = await admin(['user', 'set-password', '--email', u.email, '--json'], 'a new password 1\n');
    t.is(changed.code, 0, changed.stderr);
    t.like(JSON.parse(changed.stdout), { userId: u.id, passwordSet: true, sessionsEnded: 2 });
    t.is(await whoAmI(dev.app.httpUrl, a.cookie), 401);
    t.is(await whoAmI(dev.app.httpUrl, b.cookie), 401);
    t.is((await signIn(dev.app.httpUrl, { token: link })).status, 401, 'a link issued before the change is void');
    t.is((await signIn(dev.app.httpUrl, { email: u.email, password: PASSWORD })).status, 401);
    t.is((await signIn(dev.app.httpUrl, { email: u.email, password: 'a new password 1' })).status, 200);

    // A sign-in that only rehashes the same password (stronger parameters) is not a change: it ends nothing.
    const c = await signIn(dev.app.httpUrl, { email: u.email, password: 'a new password 1' });
    await dev.app.db.query(
      `UPDATE users SET password_hash = 'scrypt$32768$8$1$HV9Df4deDwBrb8azzo8ieQ$80N9AKe1asfFRDXQRZaxPsAgxyrAxqBc9NgFh7XJoQE' WHERE id = $1`,
      [u.id],
    );
    t.is((await signIn(dev.app.httpUrl, { email: u.email, password: 'old password 2024' })).status, 200);
    t.is(await whoAmI(dev.app.httpUrl, c.cookie), 200);
  },
);

/** The admin CLI in a terminal (a pseudo-terminal made by util-linux `script`), answering its prompts. */
function adminAtTerminal(args: string[], answers: string[]): Promise<{ code: number | null; transcript: string }> {
  const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, ...adminArgv(args)].map(quote).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      env: adminEnv(dev),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let transcript = '';
    let answered = 0;
    const onData = (d: Buffer) => {
      transcript += d.toString();
      // Each prompt ends with ": "; answer it as a person would, Enter included.
      const prompts = (transcript.match(/(New password \(at least \d+ characters\)|Again): /g) ?? []).length;
      while (answered < prompts && answered < answers.length) child.stdin.write(`${answers[answered++]}\r`);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, transcript }));
  });
}

needing({ tools: { 'script (util-linux, /usr/bin/script)': existsSync('/usr/bin/script') } }).serial(
  'at a terminal the admin CLI asks for the password twice without echoing it',
  async (t) => {
    const u = await user(dev);
    const session = await signIn(dev.app.httpUrl, { email: u.email, password: PASSWORD });
    const differ = await adminAtTerminal(['user', 'set-password', '--email', u.email, '--json'], ['typed password 1', 'typed password 2']);
    t.is(differ.code, 1, differ.transcript);
    t.regex(differ.transcript, /The two passwords differ; nothing was changed/);
    t.is(await whoAmI(dev.app.httpUrl, session.cookie), 200, 'nothing changed');

    const typed = await adminAtTerminal(['user', 'set-password', '--email', u.email, '--json'], ['typed password 1', 'typed password 1']);
    t.is(typed.code, 0, typed.transcript);
    t.regex(typed.transcript, /"passwordSet": true/);
    t.false(typed.transcript.includes('typed password'), `the password was echoed: ${typed.transcript}`);
    t.is(await whoAmI(dev.app.httpUrl, session.cookie), 401);
    t.is((await signIn(dev.app.httpUrl, { email: u.email, password: 'typed password 1' })).status, 200);
  },
);

test.serial('sign-in links: the TTL is bounded, and issuing a new link revokes the older unused ones', async (t) => {
  const u = await user(dev);
  for (const ttl of ['86400', '3601', '59', '0', 'abc']) {
    const r = await admin(['user', 'login-link', '--email', u.email, '--ttl', ttl, '--json']);
    t.is(r.code, 1, ttl);
    t.regex(r.stderr, /(from 60 to 3600 seconds|must be a number)/, ttl);
  }
  t.is(
    (await dev.app.db.one<{ n: number }>('SELECT count(*)::int AS n FROM login_links WHERE user_id = $1', [u.id]))!.n,
    0,
    'no link was made',
  );

  const first = await admin(['user', 'login-link', '--email', u.email, '--ttl', '3600', '--json']);
  t.is(first.code, 0, first.stderr);
  t.is(JSON.parse(first.stdout).expiresInSec, 3600);
  const second = await admin(['user', 'login-link', '--email', u.email, '--json']);
  t.is(JSON.parse(second.stdout).expiresInSec, 900, 'the default is 15 min');
  const tokenOf = (out: string) => new URL(JSON.parse(out).url.replace('#/', '')).searchParams.get('token')!;
  const older = await signIn(dev.app.httpUrl, { token: tokenOf(first.stdout) });
  t.is(older.status, 401, 'the first link was revoked by the second');
  t.is((await signIn(dev.app.httpUrl, { token: tokenOf(second.stdout) })).status, 200);
});

test('session timeouts are configured and checked at start', (t) => {
  const base = { databaseUrl: 'postgres://x@127.0.0.1/x', clusterToken: 'x'.repeat(20) };
  t.like(loadConfig({ ...base, publicUrl: 'https://shorts.example.com' }, {}), {
    sessionIdleTimeoutSec: 1800,
    sessionAbsoluteTimeoutSec: 43200,
  });
  t.like(loadConfig({ ...base, publicUrl: 'http://127.0.0.1:3000' }, {}), {
    sessionIdleTimeoutSec: 14400,
    sessionAbsoluteTimeoutSec: 43200,
  });
  t.like(loadConfig(base, { SESSION_IDLE_TIMEOUT_SEC: '600', SESSION_ABSOLUTE_TIMEOUT_SEC: '3600' }), {
    sessionIdleTimeoutSec: 600,
    sessionAbsoluteTimeoutSec: 3600,
  });
  t.like(
    loadConfig(base, { SESSION_ABSOLUTE_TIMEOUT_SEC: '3600' }),
    { sessionIdleTimeoutSec: 3600 },
    'the default idle timeout never exceeds the absolute one',
  );
  for (const [env, message] of [
    [
      { SESSION_IDLE_TIMEOUT_SEC: '7200', SESSION_ABSOLUTE_TIMEOUT_SEC: '3600' },
      /SESSION_IDLE_TIMEOUT_SEC: must not be longer than SESSION_ABSOLUTE_TIMEOUT_SEC/,
    ],
    [{ SESSION_IDLE_TIMEOUT_SEC: 'soon' }, /SESSION_IDLE_TIMEOUT_SEC/],
    [{ SESSION_IDLE_TIMEOUT_SEC: '10' }, /SESSION_IDLE_TIMEOUT_SEC/],
    [{ SESSION_ABSOLUTE_TIMEOUT_SEC: String(90 * 86_400) }, /SESSION_ABSOLUTE_TIMEOUT_SEC/],
  ] as const) {
    t.throws(() => loadConfig(base, env), { message }, JSON.stringify(env));
  }
});
