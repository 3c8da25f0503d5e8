import test from 'ava';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { makeTestVideo } from './helpers/media.js';
import { createUser } from '../coordinator/src/tenancy/tenancy.js';
import { createLoginLink, setPassword, verifyPassword } from '../coordinator/src/tenancy/sessions.js';
import type { Parsed } from './helpers/parsed.js';

// Studio sign-in and tus uploads against a real coordinator and Postgres (no agent: the job is
// checked as queued work; the browser test runs one to COMPLETED).

let cluster: TestCluster;
let video: Buffer;

test.before(async () => {
  cluster = await startCluster('studio_api');
  video = await readFile(await makeTestVideo(path.join(cluster.dataDir, 'clip.mp4'), { seconds: 3 }));
});
test.after.always(async () => {
  await cluster?.close();
});

const url = (p: string) => cluster.app.httpUrl + p;

/** A user of a new organization with a password; returns what the browser would hold after signing in. */
async function signedIn(plan = 'pro', credits = 100) {
  const { org, key } = await cluster.org({ plan, credits });
  const email = `u${Math.random().toString(36).slice(2)}@studio.test`;
  const user = await createUser(cluster.app.db, { email, organizationId: org.id, role: 'owner' });
  await setPassword(cluster.app.db, user.id, 'correct horse battery');
  const res = await fetch(url('/api/session'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'correct horse battery' }),
  });
  const body = (await res.json()) as Parsed;
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  return { org, key, user, email, cookie, csrf: body.csrfToken as string, res, body };
}

const tusHeaders = (s: { cookie: string; csrf: string }, extra: Record<string, string> = {}) => ({
  cookie: s.cookie,
  'x-csrf-token': s.csrf,
  'tus-resumable': '1.0.0',
  ...extra,
});
const meta = (o: Record<string, string>) =>
  Object.entries(o)
    .map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`)
    .join(',');

test('password sign-in sets an HttpOnly SameSite session cookie that acts as the user in its organization', async (t) => {
  const s = await signedIn();
  t.is(s.res.status, 200);
  const setCookie = s.res.headers.getSetCookie().find((c) => c.startsWith('shorts_session='))!;
  t.regex(setCookie, /httponly/i);
  t.regex(setCookie, /samesite=lax/i);
  t.deepEqual(
    s.body.organizations.map((o: { id: string }) => o.id),
    [s.org.id],
  );

  const jobs = await fetch(url(`/api/jobs?organizationId=${s.org.id}`), { headers: { cookie: s.cookie } });
  t.is(jobs.status, 200);
  t.deepEqual(await jobs.json(), { data: [], total: 0 });

  // Another organization's data stays out of reach, and without the cookie there is no session.
  const other = await cluster.org();
  t.is((await fetch(url(`/api/jobs?organizationId=${other.org.id}`), { headers: { cookie: s.cookie } })).status, 403);
  t.is((await fetch(url(`/api/jobs?organizationId=${s.org.id}`))).status, 401);
  // The server stores only a hash of the token.
  const stored = await cluster.app.db.query<{ token_hash: string }>('SELECT token_hash FROM sessions WHERE user_id = $1', [s.user.id]);
  t.is(stored.length, 1);
  t.false(s.cookie.includes(stored[0].token_hash));
});

test('a wrong password, an unknown e-mail and a reused sign-in link are refused alike', async (t) => {
  const s = await signedIn();
  const post = (body: unknown) =>
    fetch(url('/api/session'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const wrong = await post({ email: s.email, password: 'not the password' });
  t.is(wrong.status, 401);
  t.is(((await wrong.json()) as { message: string }).message, 'Wrong e-mail or password');
  t.is((await post({ email: 'nobody@studio.test', password: 'whatever-long' })).status, 401);

  const token = await createLoginLink(cluster.app.db, s.user.id);
  const first = await post({ token });
  t.is(first.status, 200);
  t.truthy(first.headers.getSetCookie().find((c) => c.startsWith('shorts_session=')));
  const again = await post({ token });
  t.is(again.status, 401);
  t.regex(((await again.json()) as { message: string }).message, /already used/);
});

test('password guessing on one e-mail is cut off with 429 and Retry-After', async (t) => {
  const s = await signedIn();
  const post = (password: string) =>
    fetch(url('/api/session'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: s.email.toUpperCase(), password }),
    });
  // 10 a minute: signedIn() took one. The guesses go at once, so however long each hash takes, the
  // bucket is read within a moment: nine are answered (ten if a token came back meanwhile), the rest
  // refused.
  const guesses = Array.from({ length: 13 }, (_, i) => post(`guess number ${i}`).then((r) => r.status));
  // A refusal comes back before the admitted guesses finish hashing; while refused, even the right
  // password does not get in.
  await new Promise<void>((resolve) => {
    for (const g of guesses) void g.then((status) => status === 429 && resolve());
    void Promise.all(guesses).then(() => resolve());
  });
  const refused = await post('correct horse battery');
  const statuses = await Promise.all(guesses);
  const wrong = statuses.filter((x) => x === 401).length;
  t.true(wrong >= 9 && wrong <= 10, statuses.join(','));
  t.is(statuses.filter((x) => x === 429).length, 13 - wrong, statuses.join(','));
  t.is(refused.status, 429);
  t.truthy(refused.headers.get('retry-after'));
  t.regex(((await refused.json()) as { message: string }).message, /Too many sign-in attempts/);
});

test('login CSRF: a sign-in body that is not application/json is refused (415, as on every JSON route)', async (t) => {
  const { org, key } = await cluster.org({ plan: 'pro' });
  const email = `u${Math.random().toString(36).slice(2)}@studio.test`;
  const user = await createUser(cluster.app.db, { email, organizationId: org.id, role: 'owner' });
  await setPassword(cluster.app.db, user.id, 'correct horse battery');
  const json = JSON.stringify({ email, password: 'correct horse battery' });
  // What a cross-site <form enctype="text/plain"> or a no-preflight fetch can send.
  for (const [type, body] of [
    ['text/plain', json],
    ['text/plain;charset=UTF-8', json],
    ['application/x-www-form-urlencoded', `${json.slice(0, -1)},"x":"="}`],
    ['multipart/form-data; boundary=x', json],
  ]) {
    const r = await fetch(url('/api/session'), { method: 'POST', headers: { 'content-type': type! }, body });
    t.is(r.status, 415, type);
    const answer = await r.json();
    t.like(answer, { error: 'Unsupported Media Type', code: 'unsupported_media_type' }, type);
    t.regex(answer.message, /^Send Content-Type: application\/json with a JSON body/, type);
    t.deepEqual(r.headers.getSetCookie(), [], `${type}: no session cookie`);
  }
  // Nor a JSON body with no Content-Type at all (a Blob of no type), which API routes do read.
  const untyped = await fetch(url('/api/session'), { method: 'POST', body: new Blob([json]) });
  t.is(untyped.status, 415, 'no Content-Type');
  t.deepEqual(untyped.headers.getSetCookie(), [], 'no Content-Type: no session cookie');
  const brand = (type: string) =>
    fetch(url('/api/organizations/brandings'), {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': type },
      body: JSON.stringify({ name: 'Plain' }),
    });
  t.is((await brand('text/plain')).status, 415, 'an API route refuses JSON sent without its content type (strict input)');
  t.is((await brand('application/json; charset=utf-8')).status, 200);
  const ok = await fetch(url('/api/session'), {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: json,
  });
  t.is(ok.status, 200);
});

test('login CSRF: a sign-in from another site (Sec-Fetch-Site cross-site, or a foreign Origin) is refused', async (t) => {
  const { org } = await cluster.org({ plan: 'pro' });
  const email = `u${Math.random().toString(36).slice(2)}@studio.test`;
  const user = await createUser(cluster.app.db, { email, organizationId: org.id, role: 'owner' });
  await setPassword(cluster.app.db, user.id, 'correct horse battery');
  const signIn = (headers: Record<string, string>, body: unknown = { email, password: 'correct horse battery' }) =>
    fetch(url('/api/session'), { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const own = new URL(cluster.app.httpUrl).origin;
  const refusals: Array<Record<string, string>> = [
    { 'sec-fetch-site': 'cross-site' },
    { 'sec-fetch-site': 'cross-site', origin: own },
    { origin: 'https://attacker.example' },
    { origin: own.replace('127.0.0.1', 'localhost'), 'sec-fetch-site': 'same-site' },
    { origin: 'null' },
  ];
  for (const headers of refusals) {
    const r = await signIn(headers);
    t.is(r.status, 403, JSON.stringify(headers));
    t.regex(((await r.json()) as { message: string }).message, /other sites/);
    t.deepEqual(r.headers.getSetCookie(), [], `${JSON.stringify(headers)}: no session cookie`);
  }
  // A one-time link is not spent by a refused cross-site attempt.
  const token = await createLoginLink(cluster.app.db, user.id);
  t.is((await signIn({ origin: 'https://attacker.example' }, { token })).status, 403);
  t.is((await signIn({ origin: own, 'sec-fetch-site': 'same-origin' }, { token })).status, 200);
  // The studio's own page, and clients that are not browsers (no Origin, no Sec-Fetch-Site).
  t.is((await signIn({ origin: own, 'sec-fetch-site': 'same-origin' })).status, 200);
  t.is((await signIn({})).status, 200);
});

test('passwords are hashed with scrypt N=2^17, r=8, p=1; a hash with the old parameters still signs in and is upgraded', async (t) => {
  const { org } = await cluster.org({ plan: 'pro' });
  const email = `u${Math.random().toString(36).slice(2)}@studio.test`;
  const user = await createUser(cluster.app.db, { email, organizationId: org.id, role: 'owner' });
  const storedHash = async () =>
    (await cluster.app.db.one<{ h: string }>('SELECT password_hash AS h FROM users WHERE id = $1', [user.id]))!.h;
  const signIn = (password: string) =>
    fetch(url('/api/session'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });

  await setPassword(cluster.app.db, user.id, 'a brand new password');
  t.regex(await storedHash(), /^scrypt\$131072\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
  t.is((await signIn('a brand new password')).status, 200);

  // Made by the previous release (N=2^15) for "old password 2024".
  const old = 'scrypt$32768$8$1$HV9Df4deDwBrb8azzo8ieQ$80N9AKe1asfFRDXQRZaxPsAgxyrAxqBc9NgFh7XJoQE';
  await cluster.app.db.query('UPDATE users SET password_hash = $2 WHERE id = $1', [user.id, old]);
  t.is((await signIn('old password 2025')).status, 401);
  t.is(await storedHash(), old, 'a wrong password changes nothing');
  t.is((await signIn('old password 2024')).status, 200);
  const upgraded = await storedHash();
  t.regex(upgraded, /^scrypt\$131072\$8\$1\$/, 'rehashed with the current parameters at sign-in');
  t.true(await verifyPassword('old password 2024', upgraded));
  t.is((await signIn('old password 2024')).status, 200);

  // A stored hash asking for more memory than any of ours is refused without running scrypt.
  t.false(await verifyPassword('x', 'scrypt$4194304$8$1$HV9Df4deDwBrb8azzo8ieQ$80N9AKe1asfFRDXQRZaxPsAgxyrAxqBc9NgFh7XJoQE'));
});

test('with the cookie, a state-changing request needs the session CSRF token; API keys are unchanged', async (t) => {
  const s = await signedIn();
  const create = (headers: Record<string, string>) =>
    fetch(url('/api/organizations/brandings'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ organizationId: s.org.id, name: 'Bold' }),
    });
  const noToken = await create({ cookie: s.cookie });
  t.is(noToken.status, 403);
  t.regex(((await noToken.json()) as { message: string }).message, /X-CSRF-Token/);
  t.is((await create({ cookie: s.cookie, 'x-csrf-token': 'forged' })).status, 403);
  t.is((await create({ cookie: s.cookie, 'x-csrf-token': s.csrf })).status, 200);
  t.is((await cluster.api('GET', '/api/organizations/brandings', { key: s.key })).body.length, 1);

  // Auto-archive days: the studio's setting, not the API's.
  const put = (headers: Record<string, string>, days: unknown) =>
    fetch(url('/api/organizations/settings'), {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ organizationId: s.org.id, retentionDays: days }),
    });
  t.is((await put({ authorization: `Bearer ${s.key}` }, 30)).status, 403);
  t.is((await put({ cookie: s.cookie, 'x-csrf-token': s.csrf }, 181)).status, 400);
  const ok = await put({ cookie: s.cookie, 'x-csrf-token': s.csrf }, 30);
  t.is(ok.status, 200);
  t.is(((await ok.json()) as { retentionDays: number }).retentionDays, 30);

  // Signing out ends the session on the server.
  t.is((await fetch(url('/api/session'), { method: 'DELETE', headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } })).status, 200);
  t.is((await fetch(url('/api/session'), { headers: { cookie: s.cookie } })).status, 401);
});

test('tus: an upload in chunks, resumed after HEAD, becomes a WEB_APP job; a wrong offset is 409', async (t) => {
  const s = await signedIn();
  const options = await fetch(url('/api/uploads/tus'), { method: 'OPTIONS' });
  t.is(options.status, 204);
  t.is(options.headers.get('tus-version'), '1.0.0');

  const created = await fetch(url('/api/uploads/tus'), {
    method: 'POST',
    headers: tusHeaders(s, {
      'upload-length': String(video.length),
      'upload-metadata': meta({ organizationId: s.org.id, filename: 'clip.mp4', filetype: 'video/mp4', title: 'My clip' }),
    }),
  });
  t.is(created.status, 201, await created.clone().text());
  const location = created.headers.get('location')!;
  t.regex(location, /^\/api\/uploads\/tus\/[0-9a-f-]{36}$/);

  const half = Math.floor(video.length / 2);
  const patch = (offset: number, chunk: Buffer, headers: Record<string, string> = tusHeaders(s)) =>
    fetch(url(location), {
      method: 'PATCH',
      headers: { ...headers, 'content-type': 'application/offset+octet-stream', 'upload-offset': String(offset) },
      body: new Uint8Array(chunk),
    });
  const first = await patch(0, video.subarray(0, half));
  t.is(first.status, 204);
  t.is(first.headers.get('upload-offset'), String(half));

  // A client that lost track asks where the upload stands; a PATCH at another offset is refused.
  const head = await fetch(url(location), { method: 'HEAD', headers: tusHeaders(s) });
  t.is(head.headers.get('upload-offset'), String(half));
  t.is(head.headers.get('upload-length'), String(video.length));
  t.is((await patch(0, video.subarray(0, 10))).status, 409);
  // Without the CSRF token the cookie does not write.
  t.is((await patch(half, video.subarray(half), { cookie: s.cookie, 'tus-resumable': '1.0.0' })).status, 403);

  const last = await patch(half, video.subarray(half));
  t.is(last.status, 204, await last.clone().text());
  const jobId = last.headers.get('upload-job-id')!;
  t.truthy(jobId);

  const job = await cluster.api('GET', `/api/jobs/${jobId}`, { key: s.key });
  t.is(job.status, 200);
  t.is(job.body.source, 'WEB_APP');
  t.is(job.body.title, 'My clip');
  t.is(job.body.status, 'PROCESSING');
  // The video is in the organization's storage, counted, and queued for analysis from there.
  const files = await cluster.api('GET', '/api/uploads/files?tags=upload', { key: s.key });
  t.is(files.body.files.length, 1);
  t.is(files.body.files[0].size, video.length);
  t.is(files.body.files[0].type, 'video');
  const task = await cluster.app.db.one<{ payload: { source: { kind: string; fileId?: string } } }>(
    `SELECT payload FROM tasks WHERE subject_id = $1`,
    [jobId],
  );
  t.is(task!.payload.source.kind, 'object');
  t.is(task!.payload.source.fileId, files.body.files[0].id);

  const status = await fetch(url(location), { headers: { cookie: s.cookie } });
  t.like(await status.json(), { state: 'completed', jobId, offset: video.length });
  // Another organization's key finds no such upload.
  const other = await cluster.org();
  t.is(
    (await fetch(url(location), { method: 'HEAD', headers: { authorization: `Bearer ${other.key}`, 'tus-resumable': '1.0.0' } })).status,
    404,
  );
});

test('tus: an upload the plan cannot store is refused at creation, before any byte', async (t) => {
  const s = await signedIn('free', 100);
  const create = (length: number) =>
    fetch(url('/api/uploads/tus'), {
      method: 'POST',
      headers: tusHeaders(s, {
        'upload-length': String(length),
        'upload-metadata': meta({ organizationId: s.org.id, filename: 'big.mp4' }),
      }),
    });
  const tooBig = await create(150_000_000);
  t.is(tooBig.status, 403);
  const body = (await tooBig.json()) as Parsed;
  t.is(body.error, 'fullStorage');
  t.regex(body.message, /150 MB needed/);
  t.is(body.storageInfo.totalSize, 100);

  // Uploads still arriving hold their space: two of 60 MB do not both fit in 100 MB.
  t.is((await create(60_000_000)).status, 201);
  const second = await create(60_000_000);
  t.is(second.status, 403);
  t.regex(((await second.json()) as { message: string }).message, /held by uploads still in progress/);
  // An upload silent for a day stops holding its space.
  await cluster.app.db.query(`UPDATE uploads SET updated_at = now() - interval '25 hours' WHERE organization_id = $1`, [s.org.id]);
  t.is((await create(60_000_000)).status, 201);
  t.like(
    await cluster.app.db.one(`SELECT state, error_message AS message FROM uploads WHERE organization_id = $1 ORDER BY created_at LIMIT 1`, [
      s.org.id,
    ]),
    { state: 'failed', message: 'expired: no data for 24 hours' },
  );

  // No credits: refused before the upload too.
  const poor = await signedIn('pro', 0);
  const broke = await fetch(url('/api/uploads/tus'), {
    method: 'POST',
    headers: tusHeaders(poor, { 'upload-length': '1000', 'upload-metadata': meta({ organizationId: poor.org.id, filename: 'a.mp4' }) }),
  });
  t.is(broke.status, 403);
  t.is(((await broke.json()) as { error: string }).error, 'noEnoughCredit');
  t.is((await cluster.app.db.one<{ n: number }>('SELECT count(*)::int AS n FROM uploads WHERE organization_id = $1', [poor.org.id]))!.n, 0);
});

test('tus: uploads created at the same moment are not both promised the same free space', async (t) => {
  const s = await signedIn('free', 100);
  const create = () =>
    fetch(url('/api/uploads/tus'), {
      method: 'POST',
      headers: tusHeaders(s, { 'upload-length': '60000000', 'upload-metadata': meta({ organizationId: s.org.id, filename: 'half.mp4' }) }),
    }).then((r) => r.status);
  // Each fits the 100 MB plan alone; any two together do not.
  const statuses = await Promise.all(Array.from({ length: 6 }, create));
  t.deepEqual([...statuses].sort(), [201, 403, 403, 403, 403, 403], statuses.join(','));
  t.is((await cluster.app.db.one<{ n: number }>(`SELECT count(*)::int AS n FROM uploads WHERE organization_id = $1`, [s.org.id]))!.n, 1);
});

test('tus: a finished upload that is not a video fails with a clear message and keeps nothing', async (t) => {
  const s = await signedIn();
  const junk = Buffer.from('this is not a video at all, just text '.repeat(50));
  const created = await fetch(url('/api/uploads/tus'), {
    method: 'POST',
    headers: tusHeaders(s, {
      'upload-length': String(junk.length),
      'upload-metadata': meta({ organizationId: s.org.id, filename: 'notes.mp4' }),
    }),
  });
  const res = await fetch(url(created.headers.get('location')!), {
    method: 'PATCH',
    headers: { ...tusHeaders(s), 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' },
    body: new Uint8Array(junk),
  });
  t.is(res.status, 400);
  t.regex(((await res.json()) as { message: string }).message, /notes\.mp4 is not a video/);
  const usage = await cluster.api('GET', '/api/uploads', { key: s.key });
  t.is(usage.body.usedSize, 0);
  t.is((await cluster.api('GET', '/api/jobs', { key: s.key })).body.total, 0);
});

test('tus: a watermark image upload becomes a watermark file (no job); one over 10 MB is refused at creation', async (t) => {
  const s = await signedIn();
  const { default: sharp } = await import('sharp');
  const png = await sharp({ create: { width: 64, height: 32, channels: 4, background: { r: 255, g: 0, b: 0, alpha: 0.5 } } })
    .png()
    .toBuffer();
  const create = (length: number) =>
    fetch(url('/api/uploads/tus'), {
      method: 'POST',
      headers: tusHeaders(s, {
        'upload-length': String(length),
        'upload-metadata': meta({ organizationId: s.org.id, filename: 'logo.png', purpose: 'watermark' }),
      }),
    });
  const big = await create(11_000_000);
  t.is(big.status, 413);
  t.regex(((await big.json()) as { message: string }).message, /at most 10 MB/);

  const created = await create(png.length);
  t.is(created.status, 201);
  const done = await fetch(url(created.headers.get('location')!), {
    method: 'PATCH',
    headers: { ...tusHeaders(s), 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' },
    body: new Uint8Array(png),
  });
  t.is(done.status, 204, await done.clone().text());
  t.is(done.headers.get('upload-job-id'), null);
  const fileId = done.headers.get('upload-file-id')!;
  const file = await cluster.api('GET', `/api/uploads/files/${fileId}`, { key: s.key });
  t.like(file.body, { type: 'image', name: 'logo.png', tags: ['watermark'] });
  t.is((await cluster.api('GET', '/api/jobs', { key: s.key })).body.total, 0);

  // The preset takes it by fileAppId.
  const preset = await cluster.api('POST', '/api/organizations/brandings', {
    key: s.key,
    body: { name: 'Logo', options: { waterMark: { fileAppId: fileId, left: '10px', top: '10px', width: '100px' } } },
  });
  t.is(preset.status, 200, JSON.stringify(preset.body));
});

test('social publish takes a video of the organization by fileId (its own signed URL, no https rule)', async (t) => {
  const s = await signedIn();
  const { addFileFromPath } = await import('../coordinator/src/files/store-file.js');
  const file = await addFileFromPath(cluster.app, s.org.id, path.join(cluster.dataDir, 'clip.mp4'), { tags: ['render'] });
  const post = (body: Record<string, unknown>) =>
    fetch(url('/api/organizations/social-posts/publish'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: s.cookie, 'x-csrf-token': s.csrf },
      body: JSON.stringify({
        organizationId: s.org.id,
        postType: 'video',
        caption: 'Our short',
        platforms: ['youtube'],
        platformFields: { youtubeTitle: 'Short' },
        ...body,
      }),
    });
  const ok = await post({ fileId: file.id });
  t.is(ok.status, 201, await ok.clone().text());
  const posts = await cluster.api('GET', '/api/organizations/social-posts/posts', { key: s.key });
  t.is(posts.body.posts.length, 1);
  t.like(posts.body.posts[0], { caption: 'Our short', platforms: ['youtube'] });

  const other = await cluster.org();
  const foreign = await addFileFromPath(cluster.app, other.org.id, path.join(cluster.dataDir, 'clip.mp4'));
  t.is((await post({ fileId: foreign.id })).status, 404);
  t.is((await post({ fileId: file.id, videoUrl: 'https://videos.example.com/a.mp4' })).status, 400);
});
