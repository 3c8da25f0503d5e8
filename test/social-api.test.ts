import test from 'ava';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { createUser } from '../coordinator/src/tenancy/tenancy.js';
import { startMediaServer } from './social-media-server.js';

// The whole social flow through the HTTP API, on the built-in local provider.
const BASE = '/api/organizations/social-posts';
let cluster: TestCluster;
let media: Awaited<ReturnType<typeof startMediaServer>>;

test.before(async () => {
  media = await startMediaServer();
  cluster = await startCluster('social_api');
});
test.after.always(async () => {
  await cluster?.close();
  await media?.close();
});

const api = (key: string, method: string, path: string, body?: unknown) => cluster.api(method, `${BASE}${path}`, { key, body });

/** A pro organization with the given networks linked through connect + the consent page. */
async function connectedOrg(platforms: string[] = ['linkedin', 'x'], plan = 'pro') {
  const { org, key } = await cluster.org({ plan });
  for (const platform of platforms) {
    const r = await api(key, 'POST', '/connect', { platform });
    if (r.status !== 200) throw new Error(`connect ${platform}: ${r.status} ${JSON.stringify(r.body)}`);
    const consent = await fetch(r.body.access_url);
    if (consent.status !== 200) throw new Error(`consent ${platform}: ${consent.status}`);
  }
  return { org, key };
}

const future = (ms: number) => new Date(Date.now() + ms).toISOString();
const DAY = 86_400_000;

test('settings: a default-shaped object until saved; PUT takes any subset and answers the whole', async (t) => {
  const { key } = await cluster.org({ plan: 'pro' });
  const first = await api(key, 'GET', '/settings');
  t.is(first.status, 200);
  t.deepEqual(first.body, {
    isEnabled: true,
    approveApiPosts: false,
    defaultTimezone: 'UTC',
    defaultPlatforms: [],
    queueSlots: [0, 1, 2, 3, 4, 5, 6].flatMap((dayOfWeek) => [
      { dayOfWeek, time: '09:00' },
      { dayOfWeek, time: '17:00' },
    ]),
    maxPostsPerSlot: 1,
    maxShortsOfSameVideo: 1,
    maxShortsPerWeek: 7,
    minimumVideoDurationSeconds: 0,
    processOnlyPlaylistId: null,
  });
  const put = await api(key, 'PUT', '/settings', {
    defaultTimezone: 'Europe/Berlin',
    queueSlots: [{ dayOfWeek: 1, time: '09:00' }],
    maxPostsPerSlot: 3,
  });
  t.is(put.status, 200);
  t.deepEqual(put.body, {
    ...first.body,
    defaultTimezone: 'Europe/Berlin',
    queueSlots: [{ dayOfWeek: 1, time: '09:00' }],
    maxPostsPerSlot: 3,
  });
  const second = await api(key, 'PUT', '/settings', {
    defaultPlatforms: ['tiktok', 'youtube'],
    processOnlyPlaylistId: 'PL1',
    minimumVideoDurationSeconds: 30.5,
  });
  t.deepEqual(second.body, {
    ...put.body,
    defaultPlatforms: ['tiktok', 'youtube'],
    processOnlyPlaylistId: 'PL1',
    minimumVideoDurationSeconds: 30.5,
  });
  t.deepEqual((await api(key, 'GET', '/settings')).body, second.body);
});

test('settings: each invalid field is a 400 with a message naming the rule', async (t) => {
  const { key } = await cluster.org({ plan: 'pro' });
  const cases: Array<[unknown, RegExp]> = [
    [{ defaultTimezone: 'Mars/Olympus_Mons' }, /not an IANA time zone/],
    [{ defaultPlatforms: ['youtube', 'friendster'] }, /"friendster" is not a network/],
    [{ queueSlots: [{ dayOfWeek: 7, time: '09:00' }] }, /dayOfWeek must be an integer from 0 \(Sunday\) to 6/],
    [{ queueSlots: [{ dayOfWeek: 2, time: '25:00' }] }, /HH:mm/],
    [{ queueSlots: [{ dayOfWeek: 2, time: '9am' }] }, /HH:mm/],
    [{ maxPostsPerSlot: 0 }, /maxPostsPerSlot must be an integer from 1 to 100/],
    [{ maxPostsPerSlot: 101 }, /maxPostsPerSlot must be an integer from 1 to 100/],
    [{ maxShortsPerWeek: -1 }, /non-negative/],
    [{ maxShortsOfSameVideo: -3 }, /non-negative/],
    [{ minimumVideoDurationSeconds: -1 }, /non-negative/],
    [{ approveApiPosts: 'sometimes' }, /approveApiPosts must be a boolean/],
    [{ colour: 'blue' }, /Unknown field "colour"/],
  ];
  for (const [body, message] of cases) {
    const r = await api(key, 'PUT', '/settings', body);
    t.is(r.status, 400, JSON.stringify(body));
    t.regex(r.body.message, message, JSON.stringify(body));
    t.truthy(r.body.error);
  }
  t.deepEqual((await api(key, 'GET', '/settings')).body.maxPostsPerSlot, 1, 'nothing saved');
});

test('profile and accounts: connect, consent, list, disconnect', async (t) => {
  const { key } = await cluster.org({ plan: 'business' });
  t.deepEqual((await api(key, 'GET', '/profile')).body, { connected: false, profileId: null, connectedAccounts: [], accountLinks: [] });

  const c = await api(key, 'POST', '/connect', { platform: 'tiktok' });
  t.is(c.status, 200);
  t.is(c.body.platform, 'tiktok');
  t.truthy(c.body.profileId);
  t.regex(c.body.access_url, /^http:\/\/127\.0\.0\.1:\d+\/api\/organizations\/social-posts\/local\/authorize\?token=/);
  const pending = (await api(key, 'GET', '/profile')).body;
  t.is(pending.connected, false, 'not linked until the consent page is opened');
  t.is(pending.profileId, c.body.profileId);

  const consent = await fetch(c.body.access_url);
  t.is(consent.status, 200);
  t.is((await consent.json()).platform, 'tiktok');
  t.is((await fetch(c.body.access_url)).status, 200, 'opening it again is harmless');
  // A browser gets a page in plain words, not JSON.
  const page = await fetch(c.body.access_url, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
  t.regex(page.headers.get('content-type') ?? '', /^text\/html/);
  const html = await page.text();
  t.regex(html, /<h1>Account linked<\/h1>/);
  t.regex(html, /Your tiktok account is linked; you can close this window\./);

  const redirected = await api(key, 'POST', '/connect', { platform: 'youtube', redirectUrl: 'https://app.example.com/social/done' });
  t.is(redirected.body.profileId, c.body.profileId, 'one profile per organization');
  const back = await fetch(redirected.body.access_url, { redirect: 'manual' });
  t.is(back.status, 302);
  t.is(back.headers.get('location'), 'https://app.example.com/social/done');

  const profile = (await api(key, 'GET', '/profile')).body;
  t.is(profile.connected, true);
  t.deepEqual(profile.connectedAccounts, ['tiktok', 'youtube']);
  t.deepEqual(
    profile.accountLinks.map((a: { platform: string }) => a.platform),
    ['tiktok', 'youtube'],
  );

  const d = await api(key, 'POST', '/disconnect-account', { accountId: profile.accountLinks[0].accountId });
  t.is(d.status, 200);
  t.deepEqual(d.body, { ok: true });
  t.deepEqual((await api(key, 'GET', '/profile')).body.connectedAccounts, ['youtube']);

  t.is((await api(key, 'POST', '/disconnect-account', { accountId: 'nope' })).status, 404);
  t.is((await api(key, 'POST', '/disconnect-account', {})).status, 400);
  const bad = await api(key, 'POST', '/connect', { platform: 'myspace' });
  t.is(bad.status, 400);
  t.regex(bad.body.message, /not a network/);
  const missing = await api(key, 'POST', '/connect', {});
  t.is(missing.status, 400);
  t.regex(missing.body.message, /platform: a network is required \(one of youtube, facebook, instagram, linkedin, tiktok, x\)/);
  t.is((await api(key, 'POST', '/connect', { platform: 'x', redirectUrl: 'javascript:alert(1)' })).status, 400);
  t.is((await fetch(c.body.access_url.replace(/token=.*/, 'token=forged'))).status, 404);
});

test('publish now, schedule and draft; the list shows them most recent first', async (t) => {
  const { key } = await connectedOrg(['linkedin', 'x', 'youtube', 'instagram']);
  const now = await api(key, 'POST', '/publish', { postType: 'text', caption: 'Hello world', platforms: ['linkedin', 'x'] });
  t.is(now.status, 201, JSON.stringify(now.body));
  t.is(now.body.socialPost.status, 'published');
  t.is(now.body.socialPost.scheduledFor, null);
  t.regex(now.body.socialPost.providerJobId, /^local-job-/);
  t.regex(now.body.providerPostId, /^local-post-/);

  const at = future(3 * DAY);
  const scheduled = await api(key, 'POST', '/publish', {
    postType: 'video',
    caption: 'Watch',
    platforms: ['youtube'],
    publishMode: 'schedule',
    scheduledAt: at,
    videoUrl: `${media.https}/video.mp4`,
    platformFields: { youtubeTitle: 'My short', youtubeMadeForKids: 'false' },
  });
  t.is(scheduled.status, 201, JSON.stringify(scheduled.body));
  t.is(scheduled.body.socialPost.status, 'scheduled');
  t.is(scheduled.body.socialPost.scheduledFor, at);
  t.false(
    media.requests.some((r) => r.startsWith('GET /video.mp4')),
    'the built-in provider downloads nothing, so nothing is fetched',
  );

  const draft = await api(key, 'POST', '/publish', {
    postType: 'photo',
    caption: '',
    platforms: ['instagram'],
    publishMode: 'draft',
    scheduledAt: '2030-01-01T10:00:00',
    timezone: 'America/New_York',
    photoUrls: [`${media.http}/photo-1.jpg`, `${media.https}/photo-2.jpg`],
  });
  t.is(draft.status, 201, JSON.stringify(draft.body));
  t.is(draft.body.socialPost.status, 'draft');
  t.is(draft.body.socialPost.scheduledFor, '2030-01-01T15:00:00.000Z', 'a wall time is read in the request timezone');

  const list = await api(key, 'GET', '/posts');
  t.is(list.status, 200);
  t.deepEqual(
    list.body.posts.map((p: { id: string }) => p.id),
    [draft.body.socialPost.id, scheduled.body.socialPost.id, now.body.socialPost.id],
  );
  const [d, s, p] = list.body.posts;
  t.deepEqual(
    Object.keys(p).sort(),
    [
      'caption',
      'createdAt',
      'id',
      'isPublishedOnPlatform',
      'platforms',
      'previewUrl',
      'providerError',
      'providerJobId',
      'providerLastEvent',
      'providerPlatforms',
      'scheduledFor',
      'status',
      'thumbnailUrl',
      'title',
    ].sort(),
  );
  t.like(p, {
    status: 'published',
    caption: 'Hello world',
    platforms: ['linkedin', 'x'],
    isPublishedOnPlatform: true,
    providerLastEvent: 'post.published',
    title: null,
    providerError: null,
  });
  t.deepEqual(
    p.providerPlatforms.map((x: { platform: string; status: string }) => [x.platform, x.status]),
    [
      ['linkedin', 'success'],
      ['x', 'success'],
    ],
  );
  t.like(s, {
    status: 'scheduled',
    title: 'My short',
    previewUrl: `${media.https}/video.mp4`,
    isPublishedOnPlatform: false,
    providerLastEvent: 'post.scheduled',
  });
  t.like(d, { status: 'draft', thumbnailUrl: `${media.http}/photo-1.jpg`, providerLastEvent: 'post.draft' });
  t.truthy(Date.parse(p.createdAt));
});

test('the built-in provider links a simulated account for a network a post names', async (t) => {
  const { key } = await cluster.org({ plan: 'pro' });
  t.like((await api(key, 'GET', '/profile')).body, { connected: false, profileId: null, connectedAccounts: [], accountLinks: [] });
  const post = await api(key, 'POST', '/publish', { postType: 'text', caption: 'Straight away', platforms: ['x', 'linkedin'] });
  t.is(post.status, 201, JSON.stringify(post.body));
  t.is(post.body.socialPost.status, 'published');
  const profile = (await api(key, 'GET', '/profile')).body;
  t.true(profile.connected);
  t.deepEqual([...profile.connectedAccounts].sort(), ['linkedin', 'x']);
  // A placeholder media URL is fine: nothing downloads it.
  const video = await api(key, 'POST', '/publish', {
    postType: 'video',
    caption: 'v',
    platforms: ['youtube'],
    videoUrl: 'https://videos.example.com/missing.mp4',
  });
  t.is(video.status, 201, JSON.stringify(video.body));
});

test('publish: 400 for each rule, checked through the API', async (t) => {
  const { key } = await connectedOrg(['linkedin', 'x', 'youtube', 'tiktok']);
  const video = { postType: 'video', caption: 'c', platforms: ['youtube'], videoUrl: `${media.https}/video.mp4` };
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ caption: 'no type' }, /postType/],
    [{ postType: 'video', caption: 'c', platforms: ['youtube'] }, /videoUrl is required/],
    [{ ...video, videoUrl: `${media.http}/video.mp4` }, /HTTPS/],
    [{ postType: 'photo', caption: '', platforms: ['x'] }, /photoUrls must hold 1 to 20/],
    [
      {
        postType: 'photo',
        caption: '',
        platforms: ['linkedin'],
        photoUrls: Array.from({ length: 21 }, (_, i) => `${media.http}/photo-${i}.jpg`),
      },
      /1 to 20/,
    ],
    [{ postType: 'document', caption: 'c', platforms: ['linkedin'] }, /documentUrl is required/],
    [{ postType: 'text', caption: '', platforms: ['x'] }, /caption must not be empty/],
    [{ postType: 'text', caption: 'c', platforms: ['youtube'] }, /youtube does not accept text posts/],
    [{ postType: 'text', caption: 'c' }, /platforms is required/],
    [{ ...video, publishMode: 'schedule' }, /scheduledAt is required for publishMode schedule/],
    [{ ...video, publishMode: 'draft', scheduledAt: '' }, /scheduledAt is required for publishMode draft/],
    [{ ...video, publishMode: 'schedule', scheduledAt: 'soon' }, /ISO 8601/],
    [{ ...video, publishMode: 'publish_now', scheduledAt: future(DAY) }, /applies only to publishMode draft or schedule/],
    [{ ...video, platformFields: { youtubeMadeForKids: true } }, /strings/],
    [{ ...video, platformFields: { youtubeMadeForKids: 'yes' } }, /"true" or "false"/],
    [{ ...video, platformFields: { tiktokAllowDuet: 'true' } }, /tiktok, which is not among the platforms/],
    [{ ...video, platformFields: { youtubeHashtags: '#a' } }, /not an accepted key/],
    [{ postType: 'text', caption: 'c', platforms: ['instagram'] }, /instagram does not accept text posts/],
    [{ ...video, videoUrl: 'https://10.20.30.40/video.mp4' }, /private, loopback or local address/],
    [{ ...video, videoUrl: 'https://localhost/video.mp4' }, /private, loopback or local address/],
    [{ ...video, videoUrl: 'https://printer.local/video.mp4' }, /private, loopback or local address/],
  ];
  for (const [body, message] of cases) {
    const r = await api(key, 'POST', '/publish', body);
    t.is(r.status, 400, JSON.stringify(body));
    t.regex(String(r.body.message), message, JSON.stringify(body));
  }
  t.deepEqual((await api(key, 'GET', '/posts')).body.posts, [], 'no refused post was stored');
});

test('edit: reschedule, draft and back, caption change replaces the provider job; by postId or jobId', async (t) => {
  const { key } = await connectedOrg(['linkedin']);
  const pub = await api(key, 'POST', '/publish', {
    postType: 'text',
    caption: 'v1',
    platforms: ['linkedin'],
    publishMode: 'draft',
    scheduledAt: future(DAY),
  });
  const id = pub.body.socialPost.id;
  const job1 = pub.body.socialPost.providerJobId;

  const at = future(2 * DAY);
  const e1 = await api(key, 'POST', '/edit', { postId: id, mode: 'schedule', scheduledAt: at });
  t.is(e1.status, 200, JSON.stringify(e1.body));
  t.deepEqual(e1.body, { post: { id, status: 'scheduled', scheduledFor: at } });
  const localJob = await cluster.app.db.one<{ status: string; scheduled_for: Date }>(
    `SELECT status, scheduled_for FROM social_local_jobs WHERE id = $1`,
    [job1],
  );
  t.is(localJob!.status, 'scheduled', 'the held job was released at the provider');
  t.is(localJob!.scheduled_for.toISOString(), at);

  const e2 = await api(key, 'POST', '/edit', { jobId: job1, mode: 'draft' });
  t.deepEqual(e2.body.post, { id, status: 'draft', scheduledFor: at });

  const e3 = await api(key, 'POST', '/edit', { postId: id, caption: 'v2' });
  t.is(e3.status, 200);
  t.is(e3.body.post.status, 'draft');
  const after = (await api(key, 'GET', '/posts')).body.posts[0];
  t.is(after.caption, 'v2');
  t.not(after.providerJobId, job1, 'new text means a new provider job');
  t.is((await cluster.app.db.one<{ status: string }>(`SELECT status FROM social_local_jobs WHERE id = $1`, [job1]))!.status, 'cancelled');

  const bad: Array<[Record<string, unknown>, number, RegExp]> = [
    [{ mode: 'schedule', scheduledAt: at }, 400, /postId or jobId is required/],
    [{ postId: id, mode: 'schedule' }, 400, /scheduledAt is required when mode is schedule/],
    [{ postId: id, mode: 'schedule', scheduledAt: 'whenever' }, 400, /ISO 8601/],
    [{ postId: id, mode: 'publish' }, 400, /mode must be draft or schedule/],
    [{ postId: id }, 400, /Nothing to change/],
    [{ postId: id, mode: 'schedule', scheduledAt: '2020-01-01T00:00:00Z' }, 400, /future/],
    [{ postId: 'no-such-post', mode: 'schedule', scheduledAt: at }, 404, /not found/],
    [{ jobId: 'no-such-job', mode: 'schedule', scheduledAt: at }, 404, /not found/],
  ];
  for (const [body, status, message] of bad) {
    const r = await api(key, 'POST', '/edit', body);
    t.is(r.status, status, JSON.stringify(body));
    t.regex(r.body.message, message, JSON.stringify(body));
  }
});

test('remove: cancelled with scheduledFor null and the provider job cancelled; published posts stay', async (t) => {
  const { key } = await connectedOrg(['x']);
  const s = await api(key, 'POST', '/publish', {
    postType: 'text',
    caption: 'later',
    platforms: ['x'],
    publishMode: 'schedule',
    scheduledAt: future(DAY),
  });
  const r = await api(key, 'POST', '/remove', { postId: s.body.socialPost.id });
  t.is(r.status, 200);
  t.deepEqual(r.body, { post: { id: s.body.socialPost.id, status: 'cancelled', scheduledFor: null } });
  t.is(
    (await cluster.app.db.one<{ status: string }>(`SELECT status FROM social_local_jobs WHERE id = $1`, [s.body.socialPost.providerJobId]))!
      .status,
    'cancelled',
  );
  t.deepEqual((await api(key, 'POST', '/remove', { postId: s.body.socialPost.id })).body.post.status, 'cancelled', 'idempotent');
  const listed = (await api(key, 'GET', '/posts')).body.posts[0];
  t.like(listed, { status: 'cancelled', scheduledFor: null, providerLastEvent: 'post.cancelled' });

  const byJob = await api(key, 'POST', '/publish', {
    postType: 'text',
    caption: 'by job',
    platforms: ['x'],
    publishMode: 'draft',
    scheduledAt: future(DAY),
  });
  const rj = await api(key, 'POST', '/remove', { jobId: byJob.body.socialPost.providerJobId });
  t.deepEqual(rj.body.post, { id: byJob.body.socialPost.id, status: 'cancelled', scheduledFor: null });

  const live = await api(key, 'POST', '/publish', { postType: 'text', caption: 'now', platforms: ['x'] });
  t.is((await api(key, 'POST', '/remove', { postId: live.body.socialPost.id })).status, 409);
  t.is((await api(key, 'POST', '/remove', {})).status, 400);
  t.is((await api(key, 'POST', '/remove', { postId: 'missing' })).status, 404);
  // Ids no post can have (NUL is refused by Postgres) still name nothing: 404, not a 400 about text.
  for (const ref of [{ postId: '\u0000' }, { postId: 'x\u0000y' }, { jobId: '\u0000' }]) {
    for (const [path, extra] of [
      ['/remove', {}],
      ['/edit', { mode: 'schedule', scheduledAt: future(DAY) }],
    ] as const) {
      const r = await api(key, 'POST', path, { ...ref, ...extra });
      t.is(r.status, 404, `${path} ${JSON.stringify(ref)}`);
      t.like(r.body, { error: 'Not Found', message: 'Social post not found', code: 'not_found' });
    }
  }
});

test('a scheduled post whose time has come shows as published', async (t) => {
  const { key } = await connectedOrg(['linkedin']);
  const s = await api(key, 'POST', '/publish', {
    postType: 'text',
    caption: 'soon',
    platforms: ['linkedin'],
    publishMode: 'schedule',
    scheduledAt: future(1500),
  });
  t.is(s.body.socialPost.status, 'scheduled');
  await new Promise((r) => setTimeout(r, 2000));
  const p = (await api(key, 'GET', '/posts')).body.posts[0];
  t.like(p, { status: 'published', isPublishedOnPlatform: true, providerLastEvent: 'post.published' });
});

test('next-slot and next_slot publishing: maxPostsPerSlot fills a slot, then the next one is used', async (t) => {
  const { key } = await connectedOrg(['linkedin']);
  // Before any settings are saved the default slots (every day 09:00 and 17:00) apply.
  const fresh = await api(key, 'GET', '/next-slot');
  t.is(fresh.status, 200, JSON.stringify(fresh.body));
  t.is(fresh.body.timezone, 'UTC');
  t.regex(fresh.body.nextSlot, /T(09|17):00:00(Z|\+00:00)$/);
  t.true(Date.parse(fresh.body.nextSlot) > Date.now());
  await api(key, 'PUT', '/settings', { queueSlots: [] });
  const none = await api(key, 'GET', '/next-slot');
  t.is(none.status, 400);
  t.regex(none.body.message, /No queue slots/);

  await api(key, 'PUT', '/settings', {
    queueSlots: [0, 1, 2, 3, 4, 5, 6].map((dayOfWeek) => ({ dayOfWeek, time: '10:00' })),
    maxPostsPerSlot: 2,
    defaultTimezone: 'Asia/Tokyo',
  });
  const before = await api(key, 'GET', '/next-slot');
  t.is(before.status, 200);
  t.is(before.body.timezone, 'Asia/Tokyo');
  t.regex(before.body.nextSlot, /T10:00:00\+09:00$/);
  t.is(before.body.nextSlots[0], before.body.nextSlot);
  t.is(before.body.nextSlots.length, 10);

  const queued = [];
  for (let i = 0; i < 3; i++) {
    const r = await api(key, 'POST', '/publish', { postType: 'text', caption: `q${i}`, platforms: ['linkedin'], publishMode: 'next_slot' });
    t.is(r.status, 201, JSON.stringify(r.body));
    t.is(r.body.socialPost.status, 'scheduled');
    queued.push(Date.parse(r.body.socialPost.scheduledFor));
  }
  const [a, b, c] = [Date.parse(before.body.nextSlots[0]), Date.parse(before.body.nextSlots[1]), Date.parse(before.body.nextSlots[2])];
  t.deepEqual(queued, [a, a, b], 'two posts fill the first slot; the third takes the next');
  const after = await api(key, 'GET', '/next-slot');
  t.is(Date.parse(after.body.nextSlot), b, 'the second slot still has room for one');
  t.is(Date.parse(after.body.nextSlots[1]), c);

  // Cancelling frees the place.
  const first = (await api(key, 'GET', '/posts')).body.posts.find((p: { id: string; caption: string }) => p.caption === 'q0');
  await api(key, 'POST', '/remove', { postId: first.id });
  t.is(Date.parse((await api(key, 'GET', '/next-slot')).body.nextSlot), a);

  const ny = await api(key, 'GET', '/next-slot?timezone=America/New_York');
  t.is(ny.body.timezone, 'America/New_York');
  t.regex(ny.body.nextSlot, /T10:00:00-0[45]:00$/);
  // ICU's own names for these are the old aliases Asia/Calcutta and America/Coral_Harbour; the
  // client gets the zone it sent, spelled as IANA does.
  for (const [zone, answer, offset] of [
    ['Asia/Kolkata', 'Asia/Kolkata', '+05:30'],
    ['asia/kolkata', 'Asia/Kolkata', '+05:30'],
    ['asia/calcutta', 'Asia/Calcutta', '+05:30'],
    ['America/Atikokan', 'America/Atikokan', '-05:00'],
  ]) {
    const r = await api(key, 'GET', `/next-slot?timezone=${zone}`);
    t.is(r.body.timezone, answer, zone);
    t.true(r.body.nextSlot.endsWith(`T10:00:00${offset}`), `${zone}: ${r.body.nextSlot}`);
  }
  await api(key, 'PUT', '/settings', { defaultTimezone: 'america/atikokan' });
  t.is((await api(key, 'GET', '/settings')).body.defaultTimezone, 'America/Atikokan', 'a saved default zone keeps its name too');
  t.is((await api(key, 'GET', '/next-slot')).body.timezone, 'America/Atikokan');
  const bad = await api(key, 'GET', '/next-slot?timezone=Nowhere/Special');
  t.is(bad.status, 400);
  t.regex(bad.body.message, /not an IANA time zone/);
  t.is((await api(key, 'GET', '/next-slot?count=0')).status, 400);
});

test('next_slot under concurrency: simultaneous publishes never share a one-post slot', async (t) => {
  const { key } = await connectedOrg(['linkedin']);
  await api(key, 'PUT', '/settings', {
    queueSlots: [
      { dayOfWeek: 2, time: '08:00' },
      { dayOfWeek: 5, time: '17:30' },
    ],
    maxPostsPerSlot: 1,
  });
  const results = await Promise.all(
    [0, 1, 2, 3, 4].map((i) =>
      api(key, 'POST', '/publish', { postType: 'text', caption: `c${i}`, platforms: ['linkedin'], publishMode: 'next_slot' }),
    ),
  );
  t.true(
    results.every((r) => r.status === 201),
    JSON.stringify(results.map((r) => r.body)),
  );
  const times = results.map((r) => r.body.socialPost.scheduledFor);
  t.is(new Set(times).size, 5);
  const expected = (await api(key, 'GET', '/next-slot?count=6')).body.nextSlots.map((s: string) => Date.parse(s));
  t.true(Math.min(...expected) > Math.max(...times.map((x: string) => Date.parse(x))), 'the queue moved past all five');
});

test('the OpenAPI document lists the social routes with the plan rule', async (t) => {
  const doc = (await cluster.api('GET', '/openapi.json')).body;
  for (const path of ['settings', 'profile', 'connect', 'disconnect-account', 'next-slot', 'posts', 'publish', 'edit', 'remove']) {
    t.truthy(doc.paths[`${BASE}/${path}`], path);
  }
  t.regex(doc.paths[`${BASE}/publish`].post.description, /pro and business plans/);
  t.truthy(doc.paths[`${BASE}/publish`].post.requestBody);
});

/** Offset in minutes of an ISO string like 2027-03-14T03:30:00-04:00. */
const offsetOf = (iso: string) => {
  const m = /([+-])(\d\d):(\d\d)$/.exec(iso)!;
  return (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]));
};

for (const zone of ['America/New_York', 'Europe/Berlin']) {
  test(`next-slot across a year of DST changes in ${zone}: 02:30 everywhere except the spring-forward Sunday (03:30)`, async (t) => {
    const { key } = await cluster.org({ plan: 'pro' });
    await api(key, 'PUT', '/settings', { queueSlots: [{ dayOfWeek: 0, time: '02:30' }] });
    const r = await api(key, 'GET', `/next-slot?timezone=${zone}&count=50`);
    t.is(r.status, 200);
    t.is(r.body.nextSlots.length, 50);
    let springs = 0;
    let previous: number | undefined;
    for (const iso of r.body.nextSlots as string[]) {
      const off = offsetOf(iso);
      const local = iso.slice(11, 16);
      if (previous !== undefined && off > previous) {
        // First Sunday after the clocks went forward: the week's 02:30 did not exist only if the
        // change happened that very night, which is the case for both zones (Sunday 02:00 / 02:00).
        springs++;
        t.is(local, '03:30', iso);
      } else {
        t.is(local, '02:30', iso);
      }
      previous = off;
    }
    t.is(springs, 1, 'fifty weeks hold exactly one spring-forward');
    const days = (r.body.nextSlots as string[]).map((iso) => iso.slice(0, 10));
    t.is(new Set(days).size, 50, 'one slot per Sunday');
  });
}

test('plans: free and starter get 403 on social routes; isEnabled false blocks publishing only', async (t) => {
  for (const plan of ['free', 'starter']) {
    const { key } = await cluster.org({ plan });
    for (const [method, path, body] of [
      ['GET', '/settings'],
      ['GET', '/posts'],
      ['POST', '/publish', { postType: 'text', caption: 'x', platforms: ['x'] }],
      ['POST', '/publish', {}],
      ['POST', '/connect', { platform: 'x' }],
    ] as const) {
      const r = await api(key, method, path, body);
      t.is(r.status, 403, `${plan} ${method} ${path}`);
      t.is(r.body.error, 'Social posting is not included in this plan');
      t.regex(r.body.message, new RegExp(`pro or business plan; this organization is on the ${plan} plan`));
    }
  }
  const { key } = await connectedOrg(['x'], 'business');
  const queued = await api(key, 'POST', '/publish', {
    postType: 'text',
    caption: 'q',
    platforms: ['x'],
    publishMode: 'schedule',
    scheduledAt: future(DAY),
  });
  await api(key, 'PUT', '/settings', { isEnabled: false });
  const off = await api(key, 'POST', '/publish', { postType: 'text', caption: 'x', platforms: ['x'] });
  t.is(off.status, 403);
  t.is(off.body.error, 'Social posting is disabled');
  t.is(
    (await api(key, 'POST', '/edit', { postId: queued.body.socialPost.id, mode: 'schedule', scheduledAt: future(2 * DAY) })).status,
    403,
  );
  t.is((await api(key, 'POST', '/remove', { postId: queued.body.socialPost.id })).status, 200, 'cancelling still works');
  await api(key, 'PUT', '/settings', { isEnabled: true });
  t.is((await api(key, 'POST', '/publish', { postType: 'text', caption: 'x', platforms: ['x'] })).status, 201);
});

test('approveApiPosts: API-key posts wait as pending_approval; a signed-in user approves by scheduling', async (t) => {
  const { org, key } = await connectedOrg(['linkedin']);
  const user = await createUser(cluster.app.db, { email: `approver-${org.id}@example.com`, organizationId: org.id });
  const token = await cluster.app.signer.issue(user.id);
  await api(key, 'PUT', '/settings', { approveApiPosts: true });
  const p = await api(key, 'POST', '/publish', {
    postType: 'text',
    caption: 'needs a look',
    platforms: ['linkedin'],
    publishMode: 'schedule',
    scheduledAt: future(DAY),
  });
  t.is(p.body.socialPost.status, 'pending_approval');
  const at = future(2 * DAY);
  const self = await api(key, 'POST', '/edit', { postId: p.body.socialPost.id, mode: 'schedule', scheduledAt: at });
  t.is(self.body.post.status, 'pending_approval', 'an API key cannot approve its own post');
  const approved = await cluster.api('POST', `${BASE}/edit`, {
    headers: { authorization: `Bearer ${token}` },
    body: { organizationId: org.id, postId: p.body.socialPost.id, mode: 'schedule', scheduledAt: at },
  });
  t.is(approved.status, 200, JSON.stringify(approved.body));
  t.deepEqual(approved.body.post, { id: p.body.socialPost.id, status: 'scheduled', scheduledFor: at });
  const byUser = await cluster.api('POST', `${BASE}/publish`, {
    headers: { authorization: `Bearer ${token}` },
    body: { organizationId: org.id, postType: 'text', caption: 'from the app', platforms: ['linkedin'] },
  });
  t.is(byUser.body.socialPost.status, 'published', 'posts by signed-in users need no approval');

  const draft = await api(key, 'POST', '/publish', {
    postType: 'text',
    caption: 'draft',
    platforms: ['linkedin'],
    publishMode: 'draft',
    scheduledAt: future(DAY),
  });
  t.is(draft.body.socialPost.status, 'draft');
  const released = await api(key, 'POST', '/edit', { postId: draft.body.socialPost.id, mode: 'schedule', scheduledAt: at });
  t.is(released.body.post.status, 'pending_approval', 'nor release its own draft');
  const rescheduled = await api(key, 'POST', '/edit', { postId: p.body.socialPost.id, mode: 'schedule', scheduledAt: future(4 * DAY) });
  t.is(rescheduled.body.post.status, 'scheduled', 'an approved post can still be moved by the API');
});

test("organizations are isolated: another organization's post is 404, a key with another organizationId is 403, a bearer needs organizationId", async (t) => {
  const a = await connectedOrg(['x']);
  const b = await connectedOrg(['x']);
  const post = await api(a.key, 'POST', '/publish', {
    postType: 'text',
    caption: 'mine',
    platforms: ['x'],
    publishMode: 'schedule',
    scheduledAt: future(DAY),
  });
  const id = post.body.socialPost.id;
  const jobId = post.body.socialPost.providerJobId;

  t.is((await api(b.key, 'POST', '/edit', { postId: id, mode: 'schedule', scheduledAt: future(2 * DAY) })).status, 404);
  t.is((await api(b.key, 'POST', '/remove', { postId: id })).status, 404);
  t.is((await api(b.key, 'POST', '/remove', { jobId })).status, 404);
  t.deepEqual((await api(b.key, 'GET', '/posts')).body.posts, []);
  const accountOfA = (await api(a.key, 'GET', '/profile')).body.accountLinks[0].accountId;
  t.is((await api(b.key, 'POST', '/disconnect-account', { accountId: accountOfA })).status, 404);
  t.is((await api(a.key, 'GET', '/posts')).body.posts[0].status, 'scheduled', 'untouched');

  const mismatch = await cluster.api('GET', `${BASE}/settings?organizationId=${b.org.id}`, { key: a.key });
  t.is(mismatch.status, 403);
  t.truthy(mismatch.body.error);
  t.is((await api(a.key, 'POST', '/publish', { organizationId: b.org.id, postType: 'text', caption: 'x', platforms: ['x'] })).status, 403);
  t.is((await cluster.api('GET', `${BASE}/settings?organizationId=${a.org.id}`, { key: a.key })).status, 200, 'its own id is fine');

  const user = await createUser(cluster.app.db, { email: `member-${a.org.id}@example.com`, organizationId: a.org.id });
  const token = await cluster.app.signer.issue(user.id);
  const bearer = { authorization: `Bearer ${token}` };
  for (const [method, path, body] of [
    ['GET', '/settings'],
    ['GET', '/posts'],
    ['GET', '/next-slot'],
    ['POST', '/publish', { postType: 'text', caption: 'x' }],
    ['POST', '/publish', {}],
    ['PUT', '/settings', {}],
    ['POST', '/remove', { postId: id }],
    ['POST', '/edit', { mode: 'nonsense' }],
  ] as const) {
    const r = await cluster.api(method, `${BASE}${path}`, { headers: bearer, body });
    t.is(r.status, 400, `${method} ${path}`);
    t.is(r.body.error, 'organizationId is required when not using an API key');
    t.truthy(r.body.message);
  }
  const ok = await cluster.api('GET', `${BASE}/posts?organizationId=${a.org.id}`, { headers: bearer });
  t.is(ok.status, 200);
  t.is(ok.body.posts[0].id, id);
  t.is((await cluster.api('GET', `${BASE}/posts?organizationId=${b.org.id}`, { headers: bearer })).status, 403, 'not a member');
  t.is((await cluster.api('POST', `${BASE}/remove`, { headers: bearer, body: { organizationId: a.org.id, postId: id } })).status, 200);
  t.is((await cluster.api('GET', `${BASE}/posts`)).status, 401);
  t.is(
    (await cluster.api('POST', `${BASE}/publish`, { body: { postType: 'nope' } })).status,
    401,
    'credentials are checked before the body',
  );
});
