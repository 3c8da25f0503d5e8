import test, { type ExecutionContext } from 'ava';
import { AppError } from '../coordinator/src/errors.js';
import { publishSchema, validatePublish, type PublishBody } from '../coordinator/src/social/publish-input.js';
import { DEFAULT_SETTINGS, settingsPatchSchema, type SocialSettings } from '../coordinator/src/social/settings.js';
import { postBody } from '../coordinator/src/social/ayrshare-post.js';
import { ProviderUnsupportedError } from '../coordinator/src/social/provider.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const settings: SocialSettings = { ...DEFAULT_SETTINGS, defaultPlatforms: ['linkedin'], defaultTimezone: 'Europe/Berlin' };

function run(body: Record<string, unknown>, s: SocialSettings = settings) {
  const parsed = publishSchema.safeParse(body);
  if (!parsed.success) throw new AppError(400, 'Bad Request', parsed.error.issues.map((i) => i.message).join('; '));
  return validatePublish(parsed.data as PublishBody, s, NOW);
}

function refuses(t: ExecutionContext, body: Record<string, unknown>, message: RegExp, s?: SocialSettings) {
  const err = t.throws<AppError>(() => run(body, s), undefined, JSON.stringify(body))!;
  t.is(err.status, 400);
  t.regex(err.message, message);
}

const video = { postType: 'video', caption: 'hi', platforms: ['youtube'], videoUrl: 'https://cdn.example.com/a.mp4' };

test('valid posts of each type pass, normalized', (t) => {
  const v = run(video);
  t.deepEqual(v.media, { videoUrl: 'https://cdn.example.com/a.mp4' });
  t.is(v.mode, 'publish_now');
  t.is(v.scheduledAt, null);
  t.is(v.timeZone, 'Europe/Berlin');
  t.deepEqual(
    run({ postType: 'photo', caption: '', platforms: ['instagram'], photoUrls: ['http://cdn.example.com/1.jpg'] }).media.photoUrls,
    ['http://cdn.example.com/1.jpg'],
  );
  t.is(
    run({ postType: 'document', caption: 'deck', platforms: ['linkedin'], documentUrl: 'https://cdn.example.com/d.pdf' }).postType,
    'document',
  );
  t.deepEqual(run({ postType: 'text', caption: 'hello' }).platforms, ['linkedin'], 'default platforms from settings');
});

test('postType rules: each type needs its own media and only that', (t) => {
  refuses(t, { postType: 'video', caption: 'x', platforms: ['youtube'] }, /videoUrl is required/);
  refuses(t, { ...video, videoUrl: 'http://cdn.example.com/a.mp4' }, /videoUrl must be an HTTPS URL/);
  refuses(t, { ...video, videoUrl: 'not a url' }, /videoUrl must be an absolute URL/);
  refuses(t, { ...video, videoUrl: 'https://u:p@cdn.example.com/a.mp4' }, /credentials/);
  refuses(t, { postType: 'photo', caption: '', platforms: ['instagram'] }, /photoUrls must hold 1 to 20/);
  refuses(t, { postType: 'photo', caption: '', platforms: ['instagram'], photoUrls: [] }, /photoUrls must hold 1 to 20/);
  refuses(
    t,
    { postType: 'photo', caption: '', platforms: ['linkedin'], photoUrls: Array.from({ length: 21 }, (_, i) => `https://e.com/${i}.jpg`) },
    /1 to 20/,
  );
  refuses(
    t,
    { postType: 'photo', caption: '', platforms: ['linkedin'], photoUrls: ['ftp://e.com/a.jpg'] },
    /photoUrls\[0\] must be an http or https URL/,
  );
  refuses(t, { postType: 'document', caption: 'x', platforms: ['linkedin'] }, /documentUrl is required/);
  refuses(t, { postType: 'text', caption: '   ', platforms: ['x'] }, /caption must not be empty for a text post/);
  refuses(
    t,
    { postType: 'text', caption: 'hi', platforms: ['x'], videoUrl: 'https://e.com/a.mp4' },
    /videoUrl does not apply to a text post/,
  );
  refuses(t, { ...video, photoUrls: ['https://e.com/a.jpg'] }, /photoUrls does not apply to a video post/);
  refuses(t, { postType: 'story', caption: 'x' }, /postType must be one of video, photo, text, document/);
  refuses(t, { caption: 'x' }, /postType is required: one of video, photo, text, document/);
  refuses(t, { postType: 'text', platforms: ['x'] }, /caption is required/);
});

test('platforms: known networks, not empty, defaults only when omitted, and able to carry the post type', (t) => {
  refuses(t, { postType: 'text', caption: 'hi', platforms: ['myspace'] }, /"myspace" is not a network/);
  refuses(t, { postType: 'text', caption: 'hi', platforms: [] }, /at least one network/);
  refuses(t, { postType: 'text', caption: 'hi' }, /no defaultPlatforms/, { ...settings, defaultPlatforms: [] });
  refuses(t, { postType: 'text', caption: 'hi', platforms: ['youtube'] }, /youtube does not accept text posts/);
  refuses(t, { postType: 'text', caption: 'hi', platforms: ['x', 'instagram'] }, /instagram does not accept text posts/);
  refuses(
    t,
    { postType: 'document', caption: 'hi', platforms: ['x'], documentUrl: 'https://e.com/d.pdf' },
    /x does not accept document posts/,
  );
  refuses(
    t,
    { postType: 'photo', caption: '', platforms: ['x'], photoUrls: ['1', '2', '3', '4', '5'].map((n) => `https://e.com/${n}.jpg`) },
    /x takes at most 4 photos/,
  );
  t.deepEqual(run({ postType: 'text', caption: 'hi', platforms: ['x', 'x', 'linkedin'] }).platforms, ['x', 'linkedin']);
});

test('publishMode: draft and schedule need a non-empty, valid scheduledAt; other modes refuse one', (t) => {
  refuses(t, { ...video, publishMode: 'schedule' }, /scheduledAt is required for publishMode schedule/);
  refuses(t, { ...video, publishMode: 'draft', scheduledAt: '' }, /scheduledAt is required for publishMode draft/);
  refuses(t, { ...video, publishMode: 'draft', scheduledAt: '  ' }, /scheduledAt is required/);
  refuses(t, { ...video, publishMode: 'schedule', scheduledAt: 'next tuesday' }, /ISO 8601/);
  refuses(t, { ...video, publishMode: 'schedule', scheduledAt: '2026-05-01T00:00:00Z' }, /must be in the future/);
  refuses(
    t,
    { ...video, publishMode: 'publish_now', scheduledAt: '2026-07-01T00:00:00Z' },
    /applies only to publishMode draft or schedule/,
  );
  refuses(t, { ...video, publishMode: 'next_slot', scheduledAt: '2026-07-01T00:00:00Z' }, /not next_slot/);
  refuses(t, { ...video, publishMode: 'later' }, /publishMode must be one of draft, publish_now, schedule, next_slot/);
  refuses(t, { ...video, timezone: 'Mars/Base' }, /not an IANA time zone/);
  // A draft may sit in the past; a wall time is read in the request's zone.
  t.is(run({ ...video, publishMode: 'draft', scheduledAt: '2026-01-01T00:00:00Z' }).scheduledAt, Date.parse('2026-01-01T00:00:00Z'));
  t.is(
    run({ ...video, publishMode: 'schedule', scheduledAt: '2026-07-01T09:00', timezone: 'America/New_York' }).scheduledAt,
    Date.parse('2026-07-01T13:00:00Z'),
  );
  t.is(run({ ...video, scheduledAt: '2026-07-01T09:00:00Z' }).mode, 'schedule', 'scheduledAt alone means schedule');
});

test('platformFields: only the contract keys, for chosen platforms, with string values of the right shape', (t) => {
  const pf = (fields: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    ...video,
    platforms: ['youtube', 'tiktok'],
    platformFields: fields,
    ...extra,
  });
  refuses(t, pf({ youtubeTags: 'a' }), /platformFields.youtubeTags is not an accepted key/);
  refuses(t, pf({ instagramShareToFeed: 'true' }), /instagramShareToFeed is for instagram, which is not among the platforms/);
  refuses(t, pf({ youtubeMadeForKids: true }), /values must be strings/);
  refuses(t, pf({ youtubeMadeForKids: 'yes' }), /youtubeMadeForKids must be "true" or "false"/);
  refuses(t, pf({ tiktokVideoCoverTimestampMs: '1.5' }), /non-negative integer/);
  refuses(t, pf({ youtubeVisibility: 'friends' }), /youtubeVisibility must be one of public, unlisted, private/);
  refuses(t, pf({ youtubeTitle: 'x'.repeat(101) }), /youtubeTitle is at most 100/);
  refuses(t, pf({ tiktokPhotoCoverIndex: '0' }), /tiktokPhotoCoverIndex applies only to photo posts/);
  refuses(t, { postType: 'text', caption: 'q?', platforms: ['x'], platformFields: { xPollOptions: 'only one' } }, /2 to 4 options/);
  refuses(t, { postType: 'text', caption: 'q?', platforms: ['x'], platformFields: { xPollOptions: '["a", 3]' } }, /JSON array of strings/);
  refuses(t, { postType: 'text', caption: 'q?', platforms: ['x'], platformFields: { xPollDurationMinutes: '60' } }, /needs xPollOptions/);
  refuses(
    t,
    { postType: 'photo', caption: '', platforms: ['x'], photoUrls: ['https://e.com/1.jpg'], platformFields: { xPollOptions: 'a,b' } },
    /xPollOptions applies only to text posts/,
  );
  refuses(
    t,
    {
      postType: 'photo',
      caption: '',
      platforms: ['tiktok'],
      photoUrls: ['https://e.com/1.jpg'],
      platformFields: { tiktokPhotoCoverIndex: '1' },
    },
    /must point at one of the photoUrls/,
  );
  refuses(t, { ...video, platformFields: ['youtubeTitle'] }, /platformFields must be an object/);

  const ok = run(pf({ youtubeTitle: 'T', youtubeVisibility: 'UNLISTED', youtubeMadeForKids: 'false', tiktokPrivacyLevel: 'self_only' }));
  t.deepEqual(ok.platformFields, {
    youtubeTitle: 'T',
    youtubeVisibility: 'unlisted',
    youtubeMadeForKids: 'false',
    tiktokPrivacyLevel: 'SELF_ONLY',
  });
  t.is(ok.title, 'T');
});

test('settings patch: every rule answers a readable message', (t) => {
  const bad = (body: unknown, message: RegExp) => {
    const r = settingsPatchSchema.safeParse(body);
    t.false(r.success, JSON.stringify(body));
    if (!r.success) t.regex(r.error.issues.map((i) => i.message).join('; '), message);
  };
  bad({ defaultTimezone: 'Moon/Base' }, /not an IANA time zone/);
  bad({ defaultPlatforms: ['youtube', 'myspace'] }, /"myspace" is not a network/);
  bad({ queueSlots: [{ dayOfWeek: 7, time: '09:00' }] }, /dayOfWeek must be an integer from 0 \(Sunday\) to 6/);
  bad({ queueSlots: [{ dayOfWeek: 1.5, time: '09:00' }] }, /dayOfWeek must be an integer/);
  bad({ queueSlots: [{ dayOfWeek: 1, time: '24:00' }] }, /HH:mm/);
  bad({ queueSlots: [{ dayOfWeek: 1, time: '9:00' }] }, /HH:mm/);
  bad({ queueSlots: [{ dayOfWeek: 1 }] }, /time must be a string HH:mm/);
  bad({ queueSlots: 'daily' }, /queueSlots must be an array/);
  bad({ maxPostsPerSlot: 0 }, /maxPostsPerSlot must be an integer from 1 to 100/);
  bad({ maxPostsPerSlot: 101 }, /1 to 100/);
  bad({ maxShortsPerWeek: -1 }, /maxShortsPerWeek must be a non-negative integer/);
  bad({ maxShortsOfSameVideo: 'many' }, /maxShortsOfSameVideo must be a non-negative integer/);
  bad({ minimumVideoDurationSeconds: -0.5 }, /minimumVideoDurationSeconds must be a non-negative number/);
  bad({ isEnabled: 'yes' }, /isEnabled must be a boolean/);
  bad({ favouriteColour: 'red' }, /Unknown settings field\(s\): favouriteColour/);

  const ok = settingsPatchSchema.parse({
    defaultTimezone: 'america/new_york',
    defaultPlatforms: ['x', 'x', 'tiktok'],
    queueSlots: [
      { dayOfWeek: 3, time: '18:00' },
      { dayOfWeek: 1, time: '09:30' },
      { dayOfWeek: 3, time: '18:00' },
    ],
    processOnlyPlaylistId: null,
    minimumVideoDurationSeconds: 12.5,
  });
  t.is(ok.defaultTimezone, 'America/New_York');
  t.deepEqual(ok.defaultPlatforms, ['x', 'tiktok']);
  t.deepEqual(ok.queueSlots, [
    { dayOfWeek: 1, time: '09:30' },
    { dayOfWeek: 3, time: '18:00' },
  ]);
});

test("ayrshare body: platformFields become each network's options; keys without an equivalent are refused", (t) => {
  const body = postBody({
    postType: 'video',
    caption: 'Watch',
    platforms: ['youtube', 'tiktok', 'x'],
    media: { videoUrl: 'https://e.com/v.mp4' },
    platformFields: {
      youtubeTitle: 'Title',
      youtubeVisibility: 'unlisted',
      youtubeMadeForKids: 'false',
      youtubeCategoryId: '22',
      tiktokPrivacyLevel: 'SELF_ONLY',
      tiktokAllowDuet: 'false',
      tiktokContentPreviewConfirmed: 'true',
      tiktokCommercialContentType: 'brandOrganic',
      xReplySettings: 'following',
      youtubeFirstComment: 'first!',
    },
    scheduledAt: new Date('2026-07-08T12:30:00.123Z'),
    hold: false,
  });
  t.deepEqual(body, {
    post: 'Watch',
    platforms: ['youtube', 'tiktok', 'twitter'],
    mediaUrls: ['https://e.com/v.mp4'],
    isVideo: true,
    scheduleDate: '2026-07-08T12:30:00Z',
    youTubeOptions: { title: 'Title', visibility: 'unlisted', madeForKids: false, categoryId: 22 },
    tikTokOptions: { visibility: 'private', disableDuet: true, isBrandOrganic: true },
    twitterOptions: { replySettings: 'following' },
    firstComment: { comment: 'first!' },
  });
  const err = t.throws(() =>
    postBody({
      postType: 'text',
      caption: 'x',
      platforms: ['linkedin'],
      media: {},
      platformFields: { linkedinOrganizationUrn: 'urn:li:organization:1' },
      scheduledAt: null,
      hold: false,
    }),
  );
  t.true(err instanceof ProviderUnsupportedError);
  t.regex(err!.message, /linkedinOrganizationUrn is not supported by the ayrshare provider/);
});
