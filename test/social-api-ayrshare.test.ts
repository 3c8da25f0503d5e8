import test from 'ava';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { loadSocialConfig } from '../coordinator/src/social/config.js';
import { startFakeAyrshare } from './social-fake-ayrshare.js';
import { startMediaServer } from './social-media-server.js';

// The coordinator configured for Ayrshare (SOCIAL_PROVIDER=ayrshare) against a fake Ayrshare on
// 127.0.0.1: the API flow end to end, the exact provider requests, and 502 on provider failure.
const BASE = '/api/organizations/social-posts';
let cluster: TestCluster;
let fake: Awaited<ReturnType<typeof startFakeAyrshare>>;
let media: Awaited<ReturnType<typeof startMediaServer>>;
let key: string;

test.before(async () => {
  fake = await startFakeAyrshare();
  media = await startMediaServer();
  const social = loadSocialConfig({
    SOCIAL_PROVIDER: 'ayrshare',
    SOCIAL_API_URL: fake.url,
    SOCIAL_API_KEY: 'AYR-API-KEY',
    SOCIAL_AYRSHARE_DOMAIN: 'acme',
    SOCIAL_AYRSHARE_PRIVATE_KEY: '-----BEGIN RSA PRIVATE KEY-----\\nxyz\\n-----END RSA PRIVATE KEY-----',
  });
  cluster = await startCluster('social_ayrshare', { social });
  ({ key } = await cluster.org({ plan: 'pro', name: 'Acme' }));
});
test.after.always(async () => {
  await cluster?.close();
  await fake?.close();
  await media?.close();
});
test.afterEach(() => fake.reset());

const api = (method: string, path: string, body?: unknown) => cluster.api(method, `${BASE}${path}`, { key, body });
const future = (ms: number) => new Date(Date.now() + ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

test.serial('connect creates the Ayrshare profile once and returns its linking URL', async (t) => {
  const c = await api('POST', '/connect', { platform: 'x', redirectUrl: 'https://app.example.com/back' });
  t.is(c.status, 200, JSON.stringify(c.body));
  t.is(c.body.access_url, 'https://profile.ayrshare.com?domain=acme&jwt=abc');
  t.is(c.body.platform, 'x');
  const created = fake.last('POST /api/profiles')!;
  t.is(created.headers.authorization, 'Bearer AYR-API-KEY');
  t.regex(created.body.title, /^Acme \(/);
  const jwt = fake.last('POST /api/profiles/generateJWT')!;
  t.deepEqual(jwt.body, {
    domain: 'acme',
    privateKey: '-----BEGIN RSA PRIVATE KEY-----\nxyz\n-----END RSA PRIVATE KEY-----',
    profileKey: 'PK-123',
    allowedSocial: ['twitter'],
    redirect: 'https://app.example.com/back',
  });

  await api('POST', '/connect', { platform: 'youtube' });
  t.is(fake.seen.filter((s) => s.method === 'POST' && s.path === '/api/profiles').length, 1, 'the profile is made once');

  fake.link('twitter');
  fake.link('youtube');
  const profile = await api('GET', '/profile');
  t.like(profile.body, { connected: true, profileId: c.body.profileId, connectedAccounts: ['x', 'youtube'] });
  t.deepEqual(profile.body.accountLinks, [
    { accountId: 'twitter-id', platform: 'x' },
    { accountId: 'youtube-id', platform: 'youtube' },
  ]);
  t.is(fake.last('GET /api/user')!.headers['profile-key'], 'PK-123');
});

test.serial('publish, edit and remove map to POST, PATCH and DELETE /api/post with the Profile-Key', async (t) => {
  const now = await api('POST', '/publish', { postType: 'text', caption: 'Hi from the API', platforms: ['x'] });
  t.is(now.status, 201, JSON.stringify(now.body));
  t.like(now.body.socialPost, { status: 'published', scheduledFor: null });
  t.is(now.body.providerPostId, now.body.socialPost.providerJobId);
  const sent = fake.last('POST /api/post')!;
  t.is(sent.headers['profile-key'], 'PK-123');
  t.is(sent.headers.authorization, 'Bearer AYR-API-KEY');
  t.deepEqual(sent.body, { post: 'Hi from the API', platforms: ['twitter'] });
  const listed = (await api('GET', '/posts')).body.posts[0];
  t.deepEqual(listed.providerPlatforms, [
    {
      platform: 'x',
      status: 'success',
      id: `twitter-${now.body.providerPostId}`,
      url: `https://social.example/twitter/${now.body.providerPostId}`,
      error: null,
    },
  ]);

  const at = future(86_400_000);
  const video = await api('POST', '/publish', {
    postType: 'video',
    caption: 'Clip',
    platforms: ['youtube'],
    publishMode: 'schedule',
    scheduledAt: at,
    videoUrl: `${media.https}/video.mp4`,
    platformFields: { youtubeTitle: 'Clip title', youtubeVisibility: 'public' },
  });
  t.is(video.status, 201, JSON.stringify(video.body));
  t.is(video.body.socialPost.status, 'scheduled');
  t.true(
    media.requests.some((r) => r.startsWith('GET /video.mp4 range=bytes=0-')),
    'the media URL was checked before Ayrshare got it',
  );
  t.deepEqual(fake.last('POST /api/post')!.body, {
    post: 'Clip',
    platforms: ['youtube'],
    mediaUrls: [`${media.https}/video.mp4`],
    isVideo: true,
    scheduleDate: at,
    youTubeOptions: { title: 'Clip title', visibility: 'public' },
  });

  const later = future(2 * 86_400_000);
  const edit = await api('POST', '/edit', { jobId: video.body.socialPost.providerJobId, mode: 'schedule', scheduledAt: later });
  t.is(edit.status, 200, JSON.stringify(edit.body));
  t.is(edit.body.post.scheduledFor, new Date(later).toISOString());
  const patch = fake.last('PATCH /api/post')!;
  t.is(patch.headers['profile-key'], 'PK-123');
  t.deepEqual(patch.body, { id: video.body.socialPost.providerJobId, scheduleDate: later });

  const removed = await api('POST', '/remove', { postId: video.body.socialPost.id });
  t.deepEqual(removed.body.post, { id: video.body.socialPost.id, status: 'cancelled', scheduledFor: null });
  t.deepEqual(fake.last('DELETE /api/post')!.body, { id: video.body.socialPost.providerJobId });
});

test.serial('media must be reachable before a post goes to Ayrshare, and an unlinked network is refused', async (t) => {
  const sentBefore = fake.seen.filter((r) => r.method === 'POST' && r.path === '/api/post').length;
  const missing = await api('POST', '/publish', {
    postType: 'video',
    caption: 'c',
    platforms: ['youtube'],
    videoUrl: `${media.https}/missing.mp4`,
  });
  t.is(missing.status, 400);
  t.regex(missing.body.message, /answered HTTP 404/);
  const unlinked = await api('POST', '/publish', { postType: 'text', caption: 'c', platforms: ['linkedin'] });
  t.is(unlinked.status, 400);
  t.regex(unlinked.body.message, /Not connected: linkedin/);
  t.is(fake.seen.filter((r) => r.method === 'POST' && r.path === '/api/post').length, sentBefore, 'nothing reached Ayrshare');
});

test.serial('a draft is held at Ayrshare (requiresApproval) and released by scheduling it', async (t) => {
  const d = await api('POST', '/publish', {
    postType: 'text',
    caption: 'Draft',
    platforms: ['x'],
    publishMode: 'draft',
    scheduledAt: future(86_400_000),
  });
  t.is(d.body.socialPost.status, 'draft');
  t.true(fake.last('POST /api/post')!.body.requiresApproval);
  const at = future(3 * 86_400_000);
  const e = await api('POST', '/edit', { postId: d.body.socialPost.id, mode: 'schedule', scheduledAt: at });
  t.is(e.body.post.status, 'scheduled');
  t.deepEqual(fake.last('PATCH /api/post')!.body, { id: d.body.socialPost.providerJobId, scheduleDate: at, approved: true });
});

test.serial('provider failure: publish answers 502 with the provider message and the post is kept as failed', async (t) => {
  fake.reply('POST /api/post', { status: 400, body: { status: 'error', code: 137, message: 'X/Twitter duplicate content' } });
  const r = await api('POST', '/publish', { postType: 'text', caption: 'dup', platforms: ['x'] });
  t.is(r.status, 502);
  t.is(r.body.error, 'Social provider error');
  t.regex(r.body.message, /X\/Twitter duplicate content/);
  const failed = (await api('GET', '/posts')).body.posts[0];
  t.like(failed, { status: 'failed', caption: 'dup', providerLastEvent: 'post.failed', isPublishedOnPlatform: false });
  t.regex(failed.providerError, /duplicate content/);

  fake.reply('POST /api/post', { status: 503, body: 'upstream down' });
  t.is((await api('POST', '/publish', { postType: 'text', caption: 'down', platforms: ['x'] })).status, 502);
  fake.reply('POST /api/profiles/generateJWT', { status: 500, body: { status: 'error', message: 'bad private key' } });
  const c = await api('POST', '/connect', { platform: 'x' });
  t.is(c.status, 502);
  t.regex(c.body.message, /bad private key/);
  fake.reply('GET /api/user', { status: 500, body: { status: 'error', message: 'user lookup failed' } });
  t.is((await api('GET', '/profile')).status, 502);
});

test.serial('scheduled posts that Ayrshare has sent show as published in the list (GET /api/post/:id)', async (t) => {
  const s = await api('POST', '/publish', {
    postType: 'text',
    caption: 'soon',
    platforms: ['x'],
    publishMode: 'schedule',
    scheduledAt: future(1000),
  });
  t.is(s.body.socialPost.status, 'scheduled');
  await new Promise((r) => setTimeout(r, 2000));
  const listed = (await api('GET', '/posts')).body.posts.find((p: { id: string }) => p.id === s.body.socialPost.id);
  const jobId = s.body.socialPost.providerJobId;
  t.like(listed, { status: 'published', isPublishedOnPlatform: true, providerLastEvent: 'post.published' });
  t.deepEqual(listed.providerPlatforms, [
    { platform: 'x', status: 'success', id: `twitter-${jobId}`, url: `https://social.example/twitter/${jobId}`, error: null },
  ]);
  const asked = fake.seen.find((r) => r.method === 'GET' && r.path === `/api/post/${jobId}`)!;
  t.is(asked.headers['profile-key'], 'PK-123');

  fake.reply('GET /api/post/:id', { status: 500, body: { status: 'error', message: 'down' } });
  const s2 = await api('POST', '/publish', {
    postType: 'text',
    caption: 'soon 2',
    platforms: ['x'],
    publishMode: 'schedule',
    scheduledAt: future(1000),
  });
  await new Promise((r) => setTimeout(r, 1500));
  const list = await api('GET', '/posts');
  t.is(list.status, 200, 'a provider outage does not break the list');
  t.is(list.body.posts.find((p: { id: string; status: string }) => p.id === s2.body.socialPost.id).status, 'scheduled');
});

test.serial('a platformFields key Ayrshare cannot express is a 400 before anything is sent', async (t) => {
  const before = fake.seen.length;
  const r = await api('POST', '/publish', {
    postType: 'text',
    caption: 'x',
    platforms: ['x'],
    platformFields: { xThreadItems: '["one", "two"]' },
  });
  t.is(r.status, 400);
  t.regex(r.body.message, /xThreadItems is not supported by the ayrshare provider/);
  t.false(fake.seen.slice(before).some((s) => s.method === 'POST' && s.path === '/api/post'));
});

test.serial('disconnect-account unlinks the network at Ayrshare', async (t) => {
  const r = await api('POST', '/disconnect-account', { accountId: 'twitter-id' });
  t.deepEqual(r.body, { ok: true });
  t.deepEqual(fake.last('DELETE /api/profiles/social')!.body, { platform: 'twitter' });
  t.deepEqual((await api('GET', '/profile')).body.connectedAccounts, ['youtube']);
});
