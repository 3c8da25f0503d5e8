import test from 'ava';
import { createAyrshareProvider } from '../coordinator/src/social/ayrshare-provider.js';
import { ProviderError } from '../coordinator/src/social/provider.js';
import { startFakeAyrshare } from './social-fake-ayrshare.js';

let fake: Awaited<ReturnType<typeof startFakeAyrshare>>;
const profile = { id: 'p1', organizationId: 'org1', providerKey: 'PK-123' };

test.before(async () => {
  fake = await startFakeAyrshare();
});
test.after.always(() => fake?.close());
test.afterEach(() => fake.reset());

const provider = () =>
  createAyrshareProvider({
    apiUrl: fake.url,
    apiKey: 'API-KEY-1',
    domain: 'acme',
    privateKey: '-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----',
    timeoutMs: 2000,
  });

test.serial('createProfile: POST /api/profiles with the API key, no Profile-Key, a unique title', async (t) => {
  const out = await provider().createProfile({ id: 'org-1', name: 'Acme' });
  t.deepEqual(out, { providerKey: 'PK-123', providerRef: 'ref-1' });
  const r = fake.last('POST /api/profiles')!;
  t.is(r.headers.authorization, 'Bearer API-KEY-1');
  t.is(r.headers['content-type'], 'application/json');
  t.is(r.headers['profile-key'], undefined);
  t.deepEqual(r.body, { title: 'Acme (org-1)' });
});

test.serial('linkUrl: generateJWT with domain, private key, the profile key and only the asked network', async (t) => {
  const url = await provider().linkUrl(profile, 'x', 'https://app.example.com/done');
  t.is(url, 'https://profile.ayrshare.com?domain=acme&jwt=abc');
  const r = fake.last('POST /api/profiles/generateJWT')!;
  t.is(r.headers.authorization, 'Bearer API-KEY-1');
  t.deepEqual(r.body, {
    domain: 'acme',
    privateKey: '-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----',
    profileKey: 'PK-123',
    allowedSocial: ['twitter'],
    redirect: 'https://app.example.com/done',
  });
});

test.serial('accounts and unlink: GET /api/user and DELETE /api/profiles/social with the Profile-Key', async (t) => {
  fake.link('twitter');
  fake.link('youtube');
  const p = provider();
  const accounts = await p.accounts(profile);
  t.deepEqual(
    accounts,
    [
      { platform: 'x', accountId: 'twitter-id' },
      { platform: 'youtube', accountId: 'youtube-id' },
    ],
    'pinterest is not a contract network',
  );
  const get = fake.last('GET /api/user')!;
  t.is(get.headers['profile-key'], 'PK-123');
  t.is(get.headers.authorization, 'Bearer API-KEY-1');
  t.is(get.body, undefined);

  await p.unlink(profile, accounts[0]!);
  const del = fake.last('DELETE /api/profiles/social')!;
  t.is(del.headers['profile-key'], 'PK-123');
  t.deepEqual(del.body, { platform: 'twitter' });
  t.deepEqual(await p.accounts(profile), [{ platform: 'youtube', accountId: 'youtube-id' }]);
});

test.serial('submit now: POST /api/post; per-network results come back under our network names', async (t) => {
  const out = await provider().submit(profile, {
    postType: 'photo',
    caption: 'Hello',
    platforms: ['instagram', 'x'],
    media: { photoUrls: ['https://e.com/1.jpg', 'https://e.com/2.jpg'] },
    platformFields: { instagramCollaborators: 'alice, bob' },
    scheduledAt: null,
    hold: false,
  });
  const r = fake.last('POST /api/post')!;
  t.is(r.headers['profile-key'], 'PK-123');
  t.is(r.headers.authorization, 'Bearer API-KEY-1');
  t.deepEqual(r.body, {
    post: 'Hello',
    platforms: ['instagram', 'twitter'],
    mediaUrls: ['https://e.com/1.jpg', 'https://e.com/2.jpg'],
    instagramOptions: { collaborators: ['alice', 'bob'] },
  });
  t.is(out.state, 'published');
  t.is(out.providerJobId, out.providerPostId);
  t.deepEqual(
    out.platforms.map((p) => [p.platform, p.status, p.url]),
    [
      ['instagram', 'success', `https://social.example/instagram/${out.providerJobId}`],
      ['x', 'success', `https://social.example/twitter/${out.providerJobId}`],
    ],
  );
});

test.serial('submit scheduled and held: scheduleDate in UTC seconds, requiresApproval for holds', async (t) => {
  const p = provider();
  const scheduled = await p.submit(profile, {
    postType: 'text',
    caption: 'Later',
    platforms: ['linkedin'],
    media: {},
    platformFields: {},
    scheduledAt: new Date('2026-09-01T07:00:00Z'),
    hold: false,
  });
  t.is(scheduled.state, 'scheduled');
  t.deepEqual(fake.last('POST /api/post')!.body, { post: 'Later', platforms: ['linkedin'], scheduleDate: '2026-09-01T07:00:00Z' });
  const held = await p.submit(profile, {
    postType: 'text',
    caption: 'Draft',
    platforms: ['linkedin'],
    media: {},
    platformFields: {},
    scheduledAt: new Date('2026-09-02T07:00:00Z'),
    hold: true,
  });
  t.is(held.state, 'held');
  t.deepEqual(fake.last('POST /api/post')!.body, {
    post: 'Draft',
    platforms: ['linkedin'],
    scheduleDate: '2026-09-02T07:00:00Z',
    requiresApproval: true,
  });
});

test.serial('reschedule and cancel: PATCH and DELETE /api/post by Ayrshare id', async (t) => {
  const p = provider();
  await p.reschedule(profile, 'ayr-9', { scheduledAt: new Date('2026-10-01T10:15:00Z'), release: true });
  const patch = fake.last('PATCH /api/post')!;
  t.is(patch.headers['profile-key'], 'PK-123');
  t.deepEqual(patch.body, { id: 'ayr-9', scheduleDate: '2026-10-01T10:15:00Z', approved: true });
  await p.reschedule(profile, 'ayr-9', { scheduledAt: new Date('2026-10-02T10:15:00Z'), release: false });
  t.deepEqual(fake.last('PATCH /api/post')!.body, { id: 'ayr-9', scheduleDate: '2026-10-02T10:15:00Z' });
  await p.cancel(profile, 'ayr-9');
  const del = fake.last('DELETE /api/post')!;
  t.is(del.headers['profile-key'], 'PK-123');
  t.deepEqual(del.body, { id: 'ayr-9' });
});

test.serial('refresh: GET /api/post/:id; sent posts are published, pending ones left out, unknown ones failed', async (t) => {
  const p = provider();
  const sent = await p.submit(profile, {
    postType: 'text',
    caption: 'past',
    platforms: ['linkedin'],
    media: {},
    platformFields: {},
    scheduledAt: new Date(Date.now() - 1000),
    hold: false,
  });
  const waiting = await p.submit(profile, {
    postType: 'text',
    caption: 'future',
    platforms: ['linkedin'],
    media: {},
    platformFields: {},
    scheduledAt: new Date(Date.now() + 86_400_000),
    hold: false,
  });
  const out = await p.refresh(profile, [sent.providerJobId, waiting.providerJobId, 'gone']);
  t.deepEqual(
    out.map((o) => [o.providerJobId, o.state]),
    [
      [sent.providerJobId, 'published'],
      ['gone', 'failed'],
    ],
  );
  t.deepEqual(out[0]!.platforms, [
    {
      platform: 'linkedin',
      status: 'success',
      id: `linkedin-${sent.providerJobId}`,
      url: `https://social.example/linkedin/${sent.providerJobId}`,
      error: null,
    },
  ]);
  t.regex(out[1]!.error!, /Post not found/);
  const get = fake.seen.find((r) => r.method === 'GET' && r.path === `/api/post/${sent.providerJobId}`)!;
  t.is(get.headers['profile-key'], 'PK-123');
  t.is(get.headers.authorization, 'Bearer API-KEY-1');
});

test.serial(
  'failures become ProviderError with the provider\'s message: HTTP errors, status "error", a non-JSON body, no answer',
  async (t) => {
    const p = provider();
    const post = {
      postType: 'text' as const,
      caption: 'x',
      platforms: ['x' as const],
      media: {},
      platformFields: {},
      scheduledAt: null,
      hold: false,
    };
    fake.reply('POST /api/post', {
      status: 400,
      body: { status: 'error', code: 110, message: 'Duplicate or similar content posted within the same two day period.' },
    });
    let err = await t.throwsAsync(p.submit(profile, post));
    t.true(err instanceof ProviderError);
    t.regex(err!.message, /HTTP 400: Duplicate or similar content/);

    fake.reply('POST /api/post', {
      status: 200,
      body: { status: 'error', errors: [{ action: 'post', status: 'error', message: 'Twitter rejected the post' }] },
    });
    err = await t.throwsAsync(p.submit(profile, post));
    t.regex(err!.message, /Twitter rejected the post/);

    fake.reply('DELETE /api/post', { status: 500, body: 'oops' });
    err = await t.throwsAsync(p.cancel(profile, 'ayr-1'));
    t.true(err instanceof ProviderError);

    const slow = createAyrshareProvider({ apiUrl: 'http://127.0.0.1:9/api', apiKey: 'k', domain: 'd', privateKey: 'p', timeoutMs: 500 });
    err = await t.throwsAsync(slow.accounts(profile));
    t.true(err instanceof ProviderError);
    t.regex(err!.message, /Ayrshare GET \/user failed/);
  },
);
