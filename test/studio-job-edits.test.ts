import test from 'ava';
import path from 'node:path';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { launchChromium, screenshotter } from './helpers/browser.js';
import { makeTestVideo } from './helpers/media.js';
import { needing } from './helpers/requirements.js';
import { renderListSchema } from '@shorts/common/api/renders';
import type { Word } from '@shorts/common/text/transcript';
import { buildStudio, CHROMIUM_TOOL, signInToJobPage, studioUser } from './helpers/studio.js';

// The job page as a workbench: a word fixed and a word split reach the stored transcript (and so the
// next render's captions), Undo puts every word back as it was, timings too; every render of a short
// stays listed after a reload, with its first frame, progress, play and a download named after it.

let cluster: TestCluster;
let chromium: Awaited<ReturnType<typeof launchChromium>>;
const TOOLS = CHROMIUM_TOOL;
const WORDS: Word[] = [
  { text: 'the', start: 0.5, end: 0.7 },
  { text: 'quick', start: 0.7, end: 1.1 },
  { text: 'brown', start: 1.1, end: 1.5 },
  { text: 'fax', start: 1.5, end: 1.9 },
  { text: 'jumps', start: 2.0, end: 2.4 },
  { text: 'highfive', start: 2.5, end: 3.3 },
];

test.before(async () => {
  if (!Object.values(TOOLS).every(Boolean)) return;
  buildStudio();
  cluster = await startCluster('studio_job_edits');
  await cluster.startAgent();
  chromium = await launchChromium();
});
test.after.always(async () => {
  await chromium?.close();
  await cluster?.close();
});

// Serial: the tests sign in as different users in one browser profile, which shares the cookie.
needing({ tools: TOOLS }).serial(
  "the transcript is corrected word by word on the job page, a render's captions say the corrected words, and Undo restores it exactly",
  async (t) => {
    const source = path.join(cluster.dataDir, 'words.mp4');
    await makeTestVideo(source, { seconds: 4, width: 640, height: 360 });
    const { org, key } = await cluster.org({ plan: 'pro', credits: 10, name: 'Words Org' });
    await studioUser(cluster, org.id, 'words@studio.test');
    const jobId = await insertCompletedJob(cluster.app, {
      organizationId: org.id,
      sourcePath: source,
      words: WORDS,
      width: 640,
      height: 360,
      shorts: [{ startTime: 0, endTime: 4, title: 'Fox' }],
    });
    const stored = async () =>
      (await cluster.app.db.one<{ w: Word[] }>(`SELECT data->'transcription'->'words' AS w FROM jobs WHERE id = $1`, [jobId]))!.w;
    const shown = async () => (await page.locator('[data-testid="transcript"] button.w').allInnerTexts()).map((s) => s.trim()).join(' ');

    const shot = await screenshotter('studio-job-edits');
    const base = cluster.app.httpUrl;
    const { page, pageErrors } = await signInToJobPage(chromium, base, 'words@studio.test', jobId, {
      ready: '[data-testid="transcript"] button.w',
    });
    t.is(await shown(), 'the quick brown fax jumps highfive');

    await page.click('button:has-text("Edit words")');
    // Fix a misheard word.
    await page.click('[data-testid="transcript"] button.w:has-text("fax")');
    await page.fill('#word-text', 'fox');
    await page.click('[data-testid="word-editor"] button[type="submit"]');
    await waitFor(
      async () => ((await shown()) === 'the quick brown fox jumps highfive' ? true : undefined),
      10_000,
      'the fixed word shown',
    );
    // Split a word run together: a space makes two.
    await page.click('[data-testid="transcript"] button.w:has-text("highfive")');
    await page.fill('#word-text', 'high five');
    await page.click('[data-testid="word-editor"] button[type="submit"]');
    await waitFor(
      async () => ((await shown()) === 'the quick brown fox jumps high five' ? true : undefined),
      10_000,
      'the split word shown',
    );
    await shot(page, 'transcript-edited');

    const edited = await stored();
    t.deepEqual(
      edited.map((w) => w.text),
      ['the', 'quick', 'brown', 'fox', 'jumps', 'high', 'five'],
    );
    t.deepEqual([edited[3]!.start, edited[3]!.end], [1.5, 1.9], 'the fixed word keeps its time');
    t.is(edited[5]!.start, 2.5);
    t.is(edited[6]!.end, 3.3);

    // Rendered now, the captions say the corrected words: read back from the caption script the agent
    // burned into the picture (the render's captionsUrl), not from what was asked of it.
    await page.waitForSelector('button.primary:has-text("Render"):enabled');
    await page.click('button.primary:has-text("Render")');
    await page.waitForSelector('[data-testid="short-render"][data-state="done"]', { timeout: 120_000 });
    const renders = (await cluster.api('GET', `/api/jobs/${jobId}/renders`, { key })).body;
    // The list is what the server's schema says (the studio's type for it is that schema's).
    const parsed = renderListSchema.safeParse(renders);
    t.true(parsed.success, parsed.error?.message);
    const [listed] = renders.data;
    t.truthy(listed.captionsUrl, 'a done render names its caption script');
    const script = await fetch(new URL(listed.captionsUrl, base)).then((r) => r.text());
    const captioned = captionWords(script);
    t.true(
      ['fox', 'high', 'five'].every((w) => captioned.has(w)),
      `the corrected words are captioned: ${[...captioned].join(' ')}`,
    );
    t.false(captioned.has('fax') || captioned.has('highfive'), 'the misheard words are not');

    // Undo twice: the split, then the fix; every word and time as analysed.
    await page.click('button:text-is("Undo")');
    await waitFor(async () => ((await shown()) === 'the quick brown fox jumps highfive' ? true : undefined), 10_000, 'the split undone');
    await page.click('button:text-is("Undo")');
    await waitFor(async () => ((await shown()) === 'the quick brown fax jumps highfive' ? true : undefined), 10_000, 'the fix undone');
    t.deepEqual(await stored(), WORDS);
    t.true(await page.locator('button:text-is("Undo")').isDisabled());
    t.deepEqual(pageErrors, []);
  },
);

/** Every word the script's Dialogue events draw (override tags and line breaks left out). */
function captionWords(ass: string): Set<string> {
  const words = new Set<string>();
  for (const line of ass.split('\n')) {
    if (!line.startsWith('Dialogue:')) continue;
    // Text is the tenth field: everything after the ninth comma.
    const text = line.split(',').slice(9).join(',');
    for (const w of text
      .replace(/\{[^}]*\}/g, '')
      .replace(/\\N/g, ' ')
      .split(/\s+/))
      if (w) words.add(w);
  }
  return words;
}

needing({ tools: TOOLS }).serial(
  "a short's renders stay listed on the job page after a reload, each playable and downloadable under the short's name",
  async (t) => {
    const source = path.join(cluster.dataDir, 'renders.mp4');
    await makeTestVideo(source, { seconds: 3, width: 640, height: 360 });
    const { org, key } = await cluster.org({ plan: 'pro', credits: 10, name: 'Renders Org' });
    await studioUser(cluster, org.id, 'renders@studio.test');
    // The organization's default brand preset, which the render panel starts on: the list names it.
    const preset = await cluster.api('POST', '/api/organizations/brandings', {
      key,
      body: { name: 'Channel look', preset: 'MINIMAL', size: { width: 540, height: 960 }, isDefault: true },
    });
    t.true(preset.status < 300, JSON.stringify(preset.body));
    const jobId = await insertCompletedJob(cluster.app, {
      organizationId: org.id,
      sourcePath: source,
      words: WORDS,
      width: 640,
      height: 360,
      shorts: [{ startTime: 0, endTime: 3, title: 'My clip' }],
    });

    const shot = await screenshotter('studio-job-edits');
    const base = cluster.app.httpUrl;
    const { page } = await signInToJobPage(chromium, base, 'renders@studio.test', jobId, { ready: 'h2 >> text=Shorts' });
    t.is(await page.locator('[data-testid="short-render"]').count(), 0);
    // Render is enabled once the presets have loaded and a style is chosen.
    await page.waitForSelector('button.primary:has-text("Render"):enabled');
    await page.click('button.primary:has-text("Render")');
    // Its live status shows right under the button that started it.
    const status = page.locator('[data-testid="render-status"]');
    await status.waitFor({ timeout: 10_000 });
    const button = (await page.locator('button.primary:has-text("Render")').boundingBox())!;
    const near = (await status.boundingBox())!;
    t.true(
      near.y >= button.y + button.height && near.y - (button.y + button.height) < 40,
      `status ${near.y - button.y - button.height} px under the button`,
    );
    t.regex(await status.innerText(), /Queued|Rendering|Rendered/);
    // The new render appears in the list at once and is followed there to the end.
    await page.waitForSelector('[data-testid="short-render"]', { timeout: 10_000 });
    await page.waitForSelector('[data-testid="short-render"][data-state="done"]', { timeout: 120_000 });
    await status.locator('text=Rendered').waitFor({ timeout: 10_000 });

    await page.reload();
    const item = page.locator('[data-testid="short-render"]');
    await item.first().waitFor({ timeout: 15_000 });
    t.is(await item.count(), 1, 'the render is still listed after a reload');
    t.is(await item.first().getAttribute('data-state'), 'done');
    t.is(await item.first().locator('[data-testid="render-preset"]').innerText(), 'Channel look', 'the brand preset it was rendered with');
    t.is(await item.first().locator('[data-testid="render-size"]').innerText(), '540x960');
    // The poster is the thumbnail the agent stored with the render.
    const poster = await item.first().locator('video').getAttribute('poster');
    t.truthy(poster, 'the player has a poster');
    const posterImage = await fetch(new URL(poster!, base));
    t.is(posterImage.headers.get('content-type'), 'image/jpeg');
    const thumbKey = await cluster.app.db.one<{ k: string }>(
      `SELECT f.thumbnail_key AS k FROM renders r JOIN files f ON f.id = r.file_id WHERE r.job_id = $1`,
      [jobId],
    );
    t.true(decodeURIComponent(new URL(poster!, base).pathname).endsWith(thumbKey!.k), 'the stored thumbnail, not another image');
    // Post from the list.
    await item.first().locator('summary:has-text("Post")').click();
    t.true(await item.first().locator('form[aria-label="Post this short"]').isVisible(), 'the post form opens from the listed render');
    const download = item.first().locator('a[download]');
    // Named "<short title> – <preset> – <size>.mp4" (issue 39).
    t.is(await download.getAttribute('download'), 'My clip – Channel look – 540x960.mp4');
    // The player shows a frame before it is played (not a black box): its first frame is decoded.
    const decoded = await page
      .waitForFunction(
        () => {
          const v = document.querySelector('[data-testid="short-render"] video') as HTMLVideoElement | null;
          return !!v && v.readyState >= 2 && v.videoWidth > 0;
        },
        undefined,
        { timeout: 15_000 },
      )
      .then(
        () => true,
        () => false,
      );
    t.true(decoded, 'the listed render shows its first frame');
    const listed = await cluster.api('GET', `/api/jobs/${jobId}/renders`, { key: (await cluster.org()).key });
    t.is(listed.status, 404, 'another organization does not see them');
    await shot(page, 'renders-after-reload');
  },
);

needing({ tools: TOOLS }).serial(
  'on a phone (390x844) the header is a compact menu, the job page opens on the preview, Render and the shorts, a word is corrected and a render stays listed after a reload',
  async (t) => {
    const source = path.join(cluster.dataDir, 'phone.mp4');
    await makeTestVideo(source, { seconds: 3, width: 640, height: 360 });
    const { org } = await cluster.org({ plan: 'pro', credits: 10, name: 'Phone Org' });
    await studioUser(cluster, org.id, 'phone@studio.test');
    const jobId = await insertCompletedJob(cluster.app, {
      organizationId: org.id,
      sourcePath: source,
      words: WORDS,
      width: 640,
      height: 360,
      shorts: [{ startTime: 0, endTime: 3, title: 'On the go' }],
    });

    const shot = await screenshotter('studio-job-edits');
    const base = cluster.app.httpUrl;
    const { page } = await signInToJobPage(chromium, base, 'phone@studio.test', jobId, {
      ready: 'h2 >> text=Shorts',
      viewport: { width: 390, height: 844 },
    });
    // A compact menu: one row (the name and a Menu button); the sections open under it.
    const header = await page.locator('header.top').boundingBox();
    t.true(header!.height <= 60, `the header is one row: ${header!.height} px tall`);
    t.false(await page.locator('nav.main').isVisible(), 'the sections are behind the menu');
    await shot(page, 'phone-menu-closed');
    const top = async (selector: string) => (await page.locator(selector).first().boundingBox())!.y;
    const [preview, render, shorts, player, transcript] = [
      await top('[data-testid="caption-preview"]'),
      await top('button.primary:has-text("Render")'),
      await top('.shorts-panel'),
      await top('.player'),
      await top('[data-testid="transcript"]'),
    ];
    t.true(preview < 844 && render < 844 + 400, `the preview starts on the first screen (${preview}), Render just below (${render})`);
    t.true(
      render < shorts && shorts < player && player < transcript,
      `preview ${preview}, Render ${render}, shorts ${shorts}, player ${player}, transcript ${transcript}`,
    );
    // Nothing wider than the phone.
    t.true(await page.evaluate(() => document.documentElement.scrollWidth <= 390), 'no sideways scrolling of the page');
    await shot(page, 'phone-job-page');

    // Item 2 on a phone: a word tapped, fixed and saved keeps its time.
    await page.click('button:has-text("Edit words")');
    await page.click('[data-testid="transcript"] button.w:has-text("fax")');
    await page.fill('#word-text', 'fox');
    await page.click('[data-testid="word-editor"] button[type="submit"]');
    await page.waitForSelector('[data-testid="transcript"] button.w:text-is("fox")', { timeout: 10_000 });
    const fixed = (await cluster.app.db.one<{ w: Word[] }>(`SELECT data->'transcription'->'words' AS w FROM jobs WHERE id = $1`, [jobId]))!
      .w[3]!;
    t.deepEqual(fixed, { text: 'fox', start: 1.5, end: 1.9 });
    await shot(page, 'phone-transcript-edited');

    // Item 4 on a phone: the render started here is followed in the list, and is still there after a reload.
    await page.click('button.primary:has-text("Render")');
    await page.waitForSelector('[data-testid="short-render"][data-state="done"]', { timeout: 120_000 });
    await page.reload();
    await page.waitForSelector('[data-testid="short-render"][data-state="done"]', { timeout: 15_000 });
    t.is(await page.locator('[data-testid="short-render"]').count(), 1);
    t.is(await page.locator('[data-testid="short-render"] a[download]').getAttribute('download'), 'On the go – DEFAULT – 1080x1920.mp4');
    t.true(await page.evaluate(() => document.documentElement.scrollWidth <= 390), 'the render list fits the phone');
    await shot(page, 'phone-renders-after-reload');

    await page.click('header button.menu-toggle');
    t.is(await page.getAttribute('header button.menu-toggle', 'aria-expanded'), 'true');
    t.deepEqual(
      (await page.locator('nav.main a').allInnerTexts()).map((s) => s.trim()),
      ['Jobs', 'Brand presets', 'Files', 'Social', 'Settings', 'API docs'],
    );
    t.true(await page.locator('header button:text-is("Sign out")').isVisible(), 'sign out is in the menu');
    await shot(page, 'phone-menu-open');
    await page.click('nav.main a:has-text("Brand presets")');
    await page.waitForSelector('h1 >> text=Brand presets');
    t.false(await page.locator('nav.main').isVisible(), 'choosing a section closes the menu');
    await page.close();
  },
);
