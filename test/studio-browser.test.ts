import test from 'ava';
import path from 'node:path';
import sharp from 'sharp';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { makeTalkVideo } from './helpers/talk-video.js';
import { launchChromium, screenshotter, type Page } from './helpers/browser.js';
import { needing } from './helpers/requirements.js';
import { fliteAvailable } from './transcribe-synth.js';
import type { Reframe } from '@shorts/common/reframe/types';
import { admin } from './helpers/admin-cli.js';
import { buildStudio, CHROMIUM_TOOL, signInToJobPage, STUDIO_PASSWORD, studioUser } from './helpers/studio.js';

// The whole studio in a real browser (Debian's chromium through playwright-core) against a real
// coordinator, Postgres and agent: sign in, upload a made video, watch it complete, review a short
// (transcript, crop rectangle), render and play it, post it, make a brand preset. Every screen is
// saved under test/.out/studio/ for a person to look at.

let cluster: TestCluster;
let chromium: Awaited<ReturnType<typeof launchChromium>>;
let shot: Awaited<ReturnType<typeof screenshotter>>;
let videoPath: string;
let videoDuration: number;
const EMAIL = 'ana@studio.test';
// Fails in CI (which installs them), skips elsewhere saying what is missing: see needing().
const TOOLS = { ...CHROMIUM_TOOL, flite: fliteAvailable() };
const haveTools = Object.values(TOOLS).every(Boolean);

/** The words the contract gives a job's stages, and what the studio shows once the job is done. */
const STAGE_NAMES = [
  'initiating services',
  'downloading video',
  'transcribing',
  'generating shorts',
  'active speaker detection',
  'completed',
  'failed',
];

test.before(async () => {
  if (!haveTools) return;
  buildStudio();
  cluster = await startCluster('studio_browser');
  ({ videoPath, durationSec: videoDuration } = await makeTalkVideo(cluster.dataDir));
  await cluster.startAgent();
  chromium = await launchChromium();
  shot = await screenshotter('studio');
});

test.after.always(async () => {
  await chromium?.close();
  await cluster?.close();
});

/** The crop window the page must draw at time t (the same linear interpolation the render follows). */
function expectedCrop(r: Reframe, t: number) {
  const k = r.keyframes;
  if (t <= k[0]!.time) return k[0]!;
  if (t >= k[k.length - 1]!.time) return k[k.length - 1]!;
  const i = k.findIndex((f, j) => f.time <= t && k[j + 1]!.time > t);
  const a = k[i]!,
    b = k[i + 1]!;
  const f = (t - a.time) / (b.time - a.time);
  return {
    x: a.x + (b.x - a.x) * f,
    y: a.y + (b.y - a.y) * f,
    width: a.width + (b.width - a.width) * f,
    height: a.height + (b.height - a.height) * f,
  };
}

async function seek(page: Page, t: number) {
  const landed = await page.evaluate(async (time) => {
    const v = document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement;
    v.pause();
    // Until the player rests where asked (at most 3 tries): a seek of the page's own (a panel that
    // opens on its short's start) may land in between.
    for (let tries = 0; tries < 3 && (v.seeking || Math.abs(v.currentTime - time) > 0.01); tries++) {
      await new Promise<void>((resolve) => {
        v.addEventListener('seeked', () => resolve(), { once: true });
        v.currentTime = time;
      });
    }
    return v.currentTime;
  }, t);
  if (Math.abs(landed - t) > 0.01) throw new Error(`the player did not stay at ${t} s: it is at ${landed} s`);
  // The overlay follows on the next animation frames: at least 150 ms, then until the rectangle
  // stays put across two frames (at most 3 s more), so a loaded machine is not read too early.
  await page.waitForTimeout(150);
  // (No named functions in here: the test's compiler would wrap them in a helper the page lacks.)
  await page.evaluate(async () => {
    for (const until = Date.now() + 3000; Date.now() < until;) {
      const before = JSON.stringify(document.querySelector('[data-testid="crop-rect"]')?.getBoundingClientRect() ?? null);
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      if (JSON.stringify(document.querySelector('[data-testid="crop-rect"]')?.getBoundingClientRect() ?? null) === before) return;
    }
  });
}

/** Where the rectangle is drawn, as fractions of the player. */
async function rectFractions(page: Page) {
  return page.evaluate(() => {
    const rect = document.querySelector('[data-testid="crop-rect"]') as HTMLElement | null;
    const player = document.querySelector('.player video') as HTMLElement;
    if (!rect) return null;
    const r = rect.getBoundingClientRect();
    const p = player.getBoundingClientRect();
    return { x: (r.left - p.left) / p.width, y: (r.top - p.top) / p.height, w: r.width / p.width, h: r.height / p.height };
  });
}

/** The titles the jobs list shows once it settles on `expected` (any order); what it shows otherwise. */
async function listedTitles(page: Page, expected: string[]): Promise<string[]> {
  const titles = async () => (await page.locator('table.cards tbody td[data-label="Title"]').allInnerTexts()).map((s) => s.trim()).sort();
  const want = [...expected].sort();
  try {
    return await waitFor(
      async () => {
        const now = await titles();
        return now.join('|') === want.join('|') ? now : undefined;
      },
      15_000,
      'the list to settle',
    );
  } catch {
    return titles();
  }
}

needing({ tools: TOOLS }).serial(
  'sign in, upload, watch the job complete, review a short, render, play, post, make a brand preset',
  async (t) => {
    // No t.timeout() here: ava then stops watching the whole run for that long, so a worker that never
    // exits later in the run would hang CI instead of failing it (ava 7's TimeoutTrigger drops a
    // timeout that fires inside such a window and never re-arms it). The run-wide 5m applies.
    const { org, key } = await cluster.org({ plan: 'pro', credits: 100, name: 'Studio Test Org' });
    await studioUser(cluster, org.id, EMAIL);
    const page = await chromium.browser.newPage();
    const consoleErrors: string[] = [];
    page.on('pageerror', (err) => consoleErrors.push(err.message));
    const base = cluster.app.httpUrl;

    // --- Sign in (a wrong password first: the API's words are shown).
    await page.goto(`${base}/`);
    await page.waitForSelector('text=Sign in to Shorts Studio');
    await page.fill('#email', EMAIL);
    await page.fill('#password', 'wrong password!');
    await page.press('#password', 'Enter');
    await page.waitForSelector('.error >> text=Wrong e-mail or password');
    await shot(page, '01-sign-in-error');
    await page.fill('#password', STUDIO_PASSWORD);
    await page.press('#password', 'Enter');
    await page.waitForSelector('h1 >> text=Jobs');
    const cookies = await chromium.browser.cookies(base);
    const session = cookies.find((c) => c.name === 'shorts_session')!;
    t.true(session.httpOnly);
    t.is(session.sameSite, 'Lax');

    // --- Sign out, then in again with a one-time link printed by the admin CLI; the link works once.
    await page.click('header button:text-is("Sign out")');
    await page.waitForSelector('text=Sign in to Shorts Studio');
    const printed = await admin(cluster, ['user', 'login-link', '--email', EMAIL], { PUBLIC_URL: cluster.app.httpUrl });
    const link = printed.match(/^url\s+(\S+)/m)?.[1];
    t.truthy(link, printed);
    t.true(link!.startsWith(`${base}/studio/#/sign-in?token=`), link);
    await page.goto(link!);
    await page.waitForSelector('h1 >> text=Jobs');
    t.is(await page.locator('header .muted', { hasText: EMAIL }).count(), 1, "signed in as the link's user");
    await page.goto(link!);
    await page.waitForSelector('.error >> text=This sign-in link is invalid, expired or already used');
    await shot(page, '01-sign-in-link-used');
    await page.goto(`${base}/studio/#/jobs`);
    await page.waitForSelector('h1 >> text=Jobs');

    // --- Upload a test-made talking video; the list shows it with a stage name.
    await page.setInputFiles('#upload-file', videoPath);
    await page.fill('#upload-title-input', 'Language talk');
    await page.click('button:has-text("Upload")');
    await page.waitForSelector('.notice >> text=Uploaded');
    const row = page.locator('tr', { hasText: 'Language talk' });
    await row.waitFor();
    t.is(await row.locator('td[data-label="Source"]').innerText(), 'Studio');
    const stagesSeen = new Set<string>();
    await shot(page, '02-jobs-uploaded');
    await waitFor(
      async () => {
        const stage = (await row.locator('td.stage').innerText()).trim();
        stagesSeen.add(stage);
        return stage === 'completed' || stage === 'failed';
      },
      300_000,
      'the uploaded job to finish',
    );
    t.is(await row.locator('.status').innerText(), 'COMPLETED');
    // The stage names are the API's (the contract's words), not numbers.
    t.true(
      [...stagesSeen].every((s) => STAGE_NAMES.includes(s) || s.startsWith('waiting for')),
      [...stagesSeen].join(', '),
    );
    t.true(stagesSeen.size >= 2, `stages seen: ${[...stagesSeen].join(', ')}`);
    await shot(page, '03-jobs-completed');
    const jobId = await row.getAttribute('data-job-id');

    // --- Search and the status filter, over two more jobs of the organization.
    const cooking = await insertCompletedJob(cluster.app, { organizationId: org.id, words: [], shorts: [{ startTime: 0, endTime: 2 }] });
    const broken = await insertCompletedJob(cluster.app, { organizationId: org.id, words: [], shorts: [{ startTime: 0, endTime: 2 }] });
    await cluster.app.db.query(`UPDATE jobs SET title = 'Cooking show' WHERE id = $1`, [cooking]);
    await cluster.app.db.query(
      `UPDATE jobs SET title = 'Broken upload', status = 'FAILED', error_message = 'Source unreadable' WHERE id = $1`,
      [broken],
    );
    await page.fill('#job-search', 'TALK');
    await page.press('#job-search', 'Enter');
    t.deepEqual(await listedTitles(page, ['Language talk']), ['Language talk'], 'the search matches titles whatever their case');
    await page.fill('#job-search', '');
    await page.press('#job-search', 'Enter');
    t.deepEqual(await listedTitles(page, ['Broken upload', 'Cooking show', 'Language talk']), [
      'Broken upload',
      'Cooking show',
      'Language talk',
    ]);
    await page.selectOption('#job-status', 'FAILED');
    t.deepEqual(await listedTitles(page, ['Broken upload']), ['Broken upload']);
    await page.selectOption('#job-status', 'COMPLETED');
    t.deepEqual(await listedTitles(page, ['Cooking show', 'Language talk']), ['Cooking show', 'Language talk']);
    await page.fill('#job-search', 'cook');
    await page.press('#job-search', 'Enter');
    t.deepEqual(await listedTitles(page, ['Cooking show']), ['Cooking show'], 'search and filter together');
    await shot(page, '03-jobs-search-filter');
    await page.fill('#job-search', '');
    await page.press('#job-search', 'Enter');
    await page.selectOption('#job-status', 'all');
    await listedTitles(page, ['Broken upload', 'Cooking show', 'Language talk']);

    // The job's source is the web application's, for any client.
    const apiView = await cluster.api('GET', `/api/jobs/${jobId}`, { key });
    t.is(apiView.body.source, 'WEB_APP');
    t.true(apiView.body.data.shorts.length >= 1);

    // Reframing data: the agent's when it gives one, else a moving path this test puts on short 0.
    const stored = (await cluster.app.db.one<{
      data: {
        shorts: Array<{ reframe: Reframe; startTime: number; endTime: number }>;
        source: { width: number; height: number };
        transcription: { words: unknown[] };
      };
    }>(`SELECT data FROM jobs WHERE id = $1`, [jobId]))!;
    const short0 = stored.data.shorts[0];
    const width = stored.data.source.width as number;
    const height = stored.data.source.height as number;
    let reframe: Reframe = short0.reframe;
    const inserted = !reframe?.keyframes?.length;
    if (inserted) {
      const w = Math.round((height * 9) / 16);
      reframe = {
        sourceWidth: width,
        sourceHeight: height,
        keyframes: [
          { time: short0.startTime, x: 0, y: 0, width: w, height },
          { time: short0.endTime, x: width - w, y: 0, width: w, height },
        ],
        segments: [{ start: short0.startTime, end: short0.endTime, layout: 'single', tracks: [] }],
      };
      await cluster.app.db.query(`UPDATE jobs SET data = jsonb_set(data, '{shorts,0,reframe}', $2::jsonb) WHERE id = $1`, [
        jobId,
        JSON.stringify(reframe),
      ]);
    }

    // --- The job page: player, shorts on the timeline, transcript, crop rectangle.
    await row.locator('a').click();
    await page.waitForSelector('h2 >> text=Shorts');
    await page.waitForFunction(
      () => (document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement)?.readyState >= 2,
      undefined,
      { timeout: 30_000 },
    );
    const marks = await page.locator('.timeline .mark').count();
    t.is(marks, apiView.body.data.shorts.length);
    await page.locator('.shorts-list button').first().click();
    const transcript = page.locator('[data-testid="transcript"]');
    const words = (await transcript.innerText()).trim().split(/\s+/);
    t.true(words.length >= 3, `transcript: ${words.join(' ')}`);
    t.true(
      apiView.body.data.shorts[0].text.toLowerCase().includes(words[1]!.toLowerCase().replace(/[^a-z']/g, '')),
      `${words[1]} in ${apiView.body.data.shorts[0].text}`,
    );

    const { startTime, endTime } = apiView.body.data.shorts[0];
    type StoredWord = { text: string; start: number; end: number };
    const allWords = stored.data.transcription.words as StoredWord[];
    /** The short's words, as its transcript lists them. */
    const words0 = () => allWords.filter((w) => w.start >= startTime - 0.01 && w.start < endTime);
    /** The word being spoken at t: the last one of the short to have started. */
    const spokenAt = (time: number) =>
      words0()
        .filter((w) => w.start <= time)
        .pop()?.text;
    const rectAt: Array<{ x: number; w: number }> = [];
    for (const f of [0.25, 0.75]) {
      const time = startTime + (endTime - startTime) * f;
      await seek(page, time);
      const drawn = (await rectFractions(page))!;
      t.truthy(drawn, 'the crop rectangle is drawn during the short');
      const want = expectedCrop(reframe, time);
      t.true(Math.abs(drawn.x - want.x / width) < 0.02, `x at ${time}: drawn ${drawn.x}, path ${want.x / width}`);
      t.true(Math.abs(drawn.w - want.width / width) < 0.02, `width at ${time}: drawn ${drawn.w}, path ${want.width / width}`);
      rectAt.push(drawn);
      // The highlighted word is the one spoken at this time.
      const active = await page.locator('.transcript .w.active').allInnerTexts();
      t.deepEqual(
        active.map((w) => w.trim()),
        [spokenAt(time)],
        `at ${time}`,
      );
      await shot(page, `04-job-short-at-${Math.round(f * 100)}pct`);
    }
    if (reframe.keyframes.length > 1 && reframe.keyframes[0]!.x !== reframe.keyframes[reframe.keyframes.length - 1]!.x) {
      t.not(rectAt[0]!.x.toFixed(3), rectAt[1]!.x.toFixed(3), 'the rectangle moves along the path');
    }

    // During playback the highlight follows the words as they are spoken: play from the short's start
    // for a moment, then stop and compare the lit word with the words' own times.
    await page.evaluate(async (from) => {
      const v = document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement;
      v.muted = true;
      await new Promise<void>((resolve) => {
        v.addEventListener('seeked', () => resolve(), { once: true });
        v.currentTime = from;
      });
      await v.play();
    }, startTime);
    const playFor = Math.min(1.5, (endTime - startTime) / 2);
    await page.waitForFunction(
      (until) => (document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement).currentTime >= until,
      startTime + playFor,
      { timeout: 20_000 },
    );
    const playing = await page.evaluate(async () => {
      const v = document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement;
      v.pause();
      // The page reads the clock on animation frames: let it catch up with where playback stopped.
      for (let i = 0; i < 3; i++) await new Promise((r) => requestAnimationFrame(r));
      return { time: v.currentTime, active: [...document.querySelectorAll('.transcript .w.active')].map((e) => e.textContent!.trim()) };
    });
    t.true(playing.time > startTime, `playback moved: ${JSON.stringify(playing)}`);
    t.deepEqual(playing.active, [spokenAt(playing.time)], `at ${playing.time}`);

    // Words are buttons: from the keyboard, Enter on one plays from that word.
    const shortWords = words0();
    const target = shortWords[Math.min(2, shortWords.length - 1)]!;
    const wordButton = page.locator('.transcript button.w').nth(shortWords.indexOf(target));
    await wordButton.focus();
    await page.keyboard.press('Enter');
    await page.waitForFunction(
      (at) => Math.abs((document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement).currentTime - at) < 0.05,
      target.start,
      { timeout: 10_000 },
    );
    // The highlight follows on the player's next time update: waited for (at most 5 s), not assumed.
    await page
      .waitForFunction(
        (text) => {
          const active = [...document.querySelectorAll('.transcript .w.active')].map((w) => (w as HTMLElement).innerText.trim());
          return active.length === 1 && active[0] === text;
        },
        target.text,
        { timeout: 5000 },
      )
      .catch(() => undefined);
    t.deepEqual(
      (await page.locator('.transcript .w.active').allInnerTexts()).map((w) => w.trim()),
      [target.text],
    );
    // Stopped here: played on, the player would leave the short, and the render panel, which opens
    // on its short's first frame when the playhead is elsewhere, would seek it back there.
    await page.evaluate(() => (document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement).pause());

    if (inserted) {
      // The render follows the data this test made up only once the renderer reads that shape; render from the job as the agent left it.
      await cluster.app.db.query(`UPDATE jobs SET data = $2 WHERE id = $1`, [jobId, stored.data]);
    }

    // --- An API error is shown in the API's words: run again with end before start.
    await page.fill('#adj-start', '5');
    await page.fill('#adj-end', '2');
    await page.click('button:has-text("Run again as a predefined short")');
    await page.waitForSelector('.error >> text=end must be greater than start');

    // --- Render with a built-in style, with the live preview on the cropped frame.
    await page.selectOption('#render-style', 'style:VIRAL');
    await seek(page, startTime + (endTime - startTime) * 0.5);
    await page.waitForSelector('[data-testid="caption-preview"] [data-testid="preview-caption"]');
    // The preview shows the playhead's frame through the crop window, not a stale frame: it matches a
    // fresh draw of the player's current frame cut to the expected window.
    const previewAt = startTime + (endTime - startTime) * 0.5;
    const previewCrop = expectedCrop(reframe, previewAt);
    // A `fit` segment shows the whole window over a blurred fill of itself; `single` fills the frame with it.
    const previewLayout = reframe.segments.find((g) => previewAt >= g.start && previewAt < g.end)?.layout ?? 'single';
    // Measured until the preview has drawn the frame (a loaded machine may take more than one
    // animation frame to), for at most 5 s; the last measurement is the one judged.
    const measurePreview = () =>
      page.evaluate(
        ({ box, layout }) => {
          const preview = document.querySelector('[data-testid="caption-preview"] canvas') as HTMLCanvasElement;
          const video = document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement;
          const fresh = document.createElement('canvas');
          fresh.width = preview.width;
          fresh.height = preview.height;
          const ctx = fresh.getContext('2d')!;
          ctx.fillStyle = '#000';
          ctx.fillRect(0, 0, fresh.width, fresh.height);
          if (layout === 'fit') {
            // The render's fill under the fitted picture: the picture covering the frame, blurred.
            const cover = Math.max(fresh.width / box.width, fresh.height / box.height);
            ctx.filter = `blur(${Math.max(1, Math.round(0.04 * fresh.width))}px)`;
            ctx.drawImage(
              video,
              box.x,
              box.y,
              box.width,
              box.height,
              (fresh.width - box.width * cover) / 2,
              (fresh.height - box.height * cover) / 2,
              box.width * cover,
              box.height * cover,
            );
            ctx.filter = 'none';
            const scale = Math.min(fresh.width / box.width, fresh.height / box.height);
            ctx.drawImage(
              video,
              box.x,
              box.y,
              box.width,
              box.height,
              (fresh.width - box.width * scale) / 2,
              (fresh.height - box.height * scale) / 2,
              box.width * scale,
              box.height * scale,
            );
          } else {
            ctx.drawImage(video, box.x, box.y, box.width, box.height, 0, 0, fresh.width, fresh.height);
          }
          const a = preview.getContext('2d')!.getImageData(0, 0, preview.width, preview.height).data;
          const b = fresh.getContext('2d')!.getImageData(0, 0, fresh.width, fresh.height).data;
          let diff = 0;
          let lit = 0;
          for (let i = 0; i < a.length; i += 4) {
            diff += Math.abs(a[i]! - b[i]!) + Math.abs(a[i + 1]! - b[i + 1]!) + Math.abs(a[i + 2]! - b[i + 2]!);
            lit += a[i]! + a[i + 1]! + a[i + 2]!;
          }
          // The top tenth of the frame: a fit's fill there, never a black bar.
          let top = 0;
          const topPixels = preview.width * Math.floor(preview.height / 10);
          for (let i = 0; i < topPixels * 4; i += 4) top += a[i]! + a[i + 1]! + a[i + 2]!;
          return { meanDiff: diff / (a.length / 4) / 3, meanLevel: lit / (a.length / 4) / 3, topLevel: top / topPixels / 3 };
        },
        { box: previewCrop, layout: previewLayout },
      );
    let difference = await measurePreview();
    for (const until = Date.now() + 5000; difference.meanDiff >= 4 && Date.now() < until;) {
      await page.waitForTimeout(200);
      difference = await measurePreview();
    }
    t.true(difference.topLevel > 10, `no black band at the top of the preview: ${JSON.stringify(difference)}`);
    t.not(previewLayout, 'split', 'this test video has no faces, so no split screen is expected');
    t.log(`preview against a fresh draw of the playhead's frame: mean difference ${difference.meanDiff.toFixed(2)} levels (limit 4)`);
    t.true(difference.meanLevel > 10, `the preview is drawn: ${JSON.stringify(difference)}`);
    const playhead = await page.evaluate(
      () => (document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement).currentTime,
    );
    t.true(Math.abs(playhead - previewAt) < 0.01, `the player stayed where the preview was compared: ${playhead} s, not ${previewAt} s`);
    t.true(difference.meanDiff < 4, `the preview shows the current frame: ${JSON.stringify(difference)}`);
    await shot(page, '05-render-preview');
    await page.click('button:has-text("Render")');
    await page.waitForSelector('[data-testid="render-status"]');
    await page.waitForSelector('[data-testid="render-video"], [data-testid="render-status"] .error', { timeout: 300_000 });
    const renderError = await page.locator('[data-testid="render-status"] .error').allInnerTexts();
    t.deepEqual(renderError, [], 'the render failed');
    // Play the result in the page: it decodes and its clock moves.
    const played = await page.evaluate(async () => {
      const v = document.querySelector('[data-testid="render-video"]') as HTMLVideoElement;
      v.muted = true;
      await v.play();
      await new Promise((r) => setTimeout(r, 1500));
      return { time: v.currentTime, duration: v.duration, width: v.videoWidth, height: v.videoHeight };
    });
    t.true(played.time > 0.2, JSON.stringify(played));
    // The size control's default on a pro plan, sent with the render: 1080x1920 (the API alone gives 720x1280).
    t.is(played.width, 1080);
    t.is(played.height, 1920);
    t.true(Math.abs(played.duration - (endTime - startTime)) < 0.5, JSON.stringify(played));
    const download = await page.locator('a:has-text("Download MP4")').getAttribute('href');
    t.truthy(download);
    const downloaded = await fetch(new URL(download!, base));
    t.is(downloaded.status, 200);
    t.is(downloaded.headers.get('content-type'), 'video/mp4');
    await shot(page, '06-render-done');

    // --- Post the render with the local social provider.
    await page.fill('#post-caption', 'Practice every day');
    await page.click('form[aria-label="Post this short"] button:has-text("Post")');
    await page.waitForSelector('.notice >> text=Post published');
    await shot(page, '07-posted');
    await page.click('nav.main >> text=Social');
    await page.waitForSelector('td[data-label="Caption"] >> text=Practice every day');
    await shot(page, '08-social');

    // --- Brand preset: create it with an uploaded watermark, as the default.
    await page.click('nav.main >> text=Brand presets');
    await page.click('button:has-text("New brand preset")');
    await page.fill('#preset-name', 'Bold brand');
    await page.selectOption('#preset-style', 'BEAST');
    const logo = path.join(cluster.dataDir, 'logo.png');
    await sharp({ create: { width: 120, height: 60, channels: 4, background: { r: 20, g: 120, b: 255, alpha: 0.8 } } })
      .png()
      .toFile(logo);
    await page.setInputFiles('#wm-file', logo);
    // The uploaded logo is listed by its file name once its upload is stored.
    await page.waitForSelector('[data-testid="watermark-file"] >> text=logo.png');
    await page.check('text=Default for renders');
    await shot(page, '09-preset-editor');
    await page.click('button:has-text("Save preset")');
    const presetRow = page.locator('tr', { hasText: 'Bold brand' });
    await presetRow.waitFor();
    t.is((await presetRow.locator('td[data-label="Watermark"]').innerText()).trim(), 'yes');
    t.regex(await presetRow.locator('td[data-label="State"]').innerText(), /default/);
    const presets = await cluster.api('GET', '/api/organizations/brandings', { key });
    t.like(presets.body[0], { name: 'Bold brand', preset: 'BEAST', isDefault: true });
    t.truthy(presets.body[0].options.waterMark.fileAppId);
    await shot(page, '10-presets');

    // --- Files with the storage meter; settings.
    await page.click('nav.main >> text=Files');
    await page.waitForSelector('text=MB used');
    t.true((await page.locator('td[data-label="Tags"]', { hasText: 'render' }).count()) >= 1);
    await shot(page, '11-files');
    await page.click('nav.main >> text=Settings');
    await page.fill('#retention', '30');
    await page.click('button:has-text("Save")');
    await page.waitForSelector('.notice >> text=archived after 30 days');
    t.is((await cluster.app.db.one<{ d: number }>('SELECT retention_days AS d FROM organizations WHERE id = $1', [org.id]))!.d, 30);
    await shot(page, '12-settings');

    // --- A phone-sized window: every screen fits its width; the nav is reachable from the keyboard.
    await page.setViewportSize({ width: 390, height: 844 });
    const screens = [
      ['jobs', '#/jobs'],
      ['job', `#/jobs/${jobId}`],
      ['presets', '#/presets'],
      ['files', '#/files'],
      ['social', '#/social'],
      ['settings', '#/settings'],
      ['sign-in', '#/sign-in'],
    ] as const;
    for (const [name, hash] of screens) {
      await page.goto(`${base}/studio/${hash}`);
      await page.waitForSelector('h1');
      await page.waitForTimeout(300);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      t.true(overflow <= 1, `${name} is ${overflow}px wider than a phone screen`);
      await shot(page, `13-phone-${name}`);
    }
    // From the keyboard: a fresh page, Tab reaches the skip link, then the Menu button; Enter opens
    // the sections, and Enter follows one.
    const keys = await chromium.browser.newPage();
    await keys.setViewportSize({ width: 390, height: 844 });
    await keys.goto(`${base}/studio/#/jobs`);
    await keys.waitForSelector('h1');
    await keys.keyboard.press('Tab');
    t.is(await keys.evaluate(() => document.activeElement?.textContent), 'Skip to content');
    await keys.keyboard.press('Tab');
    t.is(await keys.evaluate(() => document.activeElement?.textContent), 'Menu');
    await keys.keyboard.press('Enter');
    await keys.keyboard.press('Tab');
    await keys.keyboard.press('Tab');
    t.is(await keys.evaluate(() => document.activeElement?.textContent), 'Brand presets');
    await keys.keyboard.press('Enter');
    await keys.waitForSelector('h1 >> text=Brand presets');
    t.deepEqual(consoleErrors, []);
  },
);

needing({ tools: TOOLS }).serial(
  "the job page marks a short's shot cut on the timeline and names the layout of the moment as playback crosses segments",
  async (t) => {
    const { org } = await cluster.org({ plan: 'pro', credits: 10, name: 'Shots Org' });
    await studioUser(cluster, org.id, 'shots@studio.test');

    // A short of two shots, cut at 8 s: the first framed on the speaker, then fitted whole (the speaker
    // left the picture), the second a facecam stacked over its screen. 640x360, as the talk video.
    const [start, cut, end] = [2, 8, 14];
    const facecam = { x: 480, y: 0, width: 160, height: 120 };
    const screen = { x: 0, y: 0, width: 350, height: 360 };
    const reframe: Reframe = {
      sourceWidth: 640,
      sourceHeight: 360,
      keyframes: [
        { time: start, x: 100, y: 0, width: 202, height: 360 },
        { time: 5, x: 200, y: 0, width: 202, height: 360 },
        { time: 5, x: 0, y: 0, width: 640, height: 360 },
        { time: cut, x: 0, y: 0, width: 640, height: 360 },
        { time: cut, ...facecam, panels: [facecam, screen] },
        { time: end, ...facecam, panels: [facecam, screen] },
      ],
      segments: [
        { start, end: 5, layout: 'single', tracks: [0] },
        { start: 5, end: cut, layout: 'fit', tracks: [] },
        { start: cut, end, layout: 'stack', tracks: [0] },
      ],
      shots: [
        { start, end: cut, transition: 'start' },
        { start: cut, end, transition: 'cut' },
      ],
    };
    t.true(videoDuration > end + 1, `the talk video (${videoDuration} s) holds the short`);
    const jobId = await insertCompletedJob(cluster.app, {
      organizationId: org.id,
      sourcePath: videoPath,
      words: [],
      width: 640,
      height: 360,
      shorts: [{ startTime: start, endTime: end, title: 'Shots and layouts', reframe }],
    });

    // The persistent browser may hold the first test's session: sign in afresh as this organization's user.
    const base = cluster.app.httpUrl;
    const { page, pageErrors } = await signInToJobPage(chromium, base, 'shots@studio.test', jobId, { ready: 'h2 >> text=Shorts' });
    await page.waitForFunction(
      () => (document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement)?.readyState >= 2,
      undefined,
      { timeout: 30_000 },
    );

    // One mark, at the cut's place on the source's timeline (its centre, as a fraction of the track).
    t.is(await page.locator('.timeline [data-testid="shot-cut"]').count(), 1);
    t.is(await page.locator('.timeline [data-testid="shot-dissolve"]').count(), 0);
    const placed = await page.evaluate(() => {
      const track = document.querySelector('.timeline') as HTMLElement;
      const mark = track.querySelector('[data-testid="shot-cut"]') as HTMLElement;
      const video = document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement;
      const m = mark.getBoundingClientRect();
      const inner = track.getBoundingClientRect().left + track.clientLeft;
      return { fraction: (m.left + m.width / 2 - inner) / track.clientWidth, duration: video.duration };
    });
    const wantFraction = cut / placed.duration;
    t.true(
      Math.abs(placed.fraction - wantFraction) < 0.005,
      `cut mark at ${placed.fraction.toFixed(4)} of the timeline, the cut at ${wantFraction.toFixed(4)}`,
    );

    // The label names each segment's layout; the stack outlines both of its windows on the player.
    const label = page.locator('.player [data-testid="layout-label"]');
    const previewLabel = page.locator('[data-testid="preview-badges"] [data-testid="preview-layout-label"]');
    const layoutsSeen: Record<string, { player: string; preview: string; rects: number }> = {};
    for (const [name, time] of [
      ['single', 3.5],
      ['fit', 6.5],
      ['stack', 11],
    ] as const) {
      await seek(page, time);
      layoutsSeen[name] = {
        player: (await label.textContent())!.trim(),
        preview: (await previewLabel.textContent())!.trim(),
        rects: await page.locator('[data-testid="crop-rect"]').count(),
      };
      await shot(page, `14-job-layout-${name}`);
    }
    t.deepEqual(layoutsSeen, {
      single: { player: 'single', preview: 'single', rects: 1 },
      fit: { player: 'fit', preview: 'fit', rects: 1 },
      stack: { player: 'stack', preview: 'stack', rects: 2 },
    });
    // Outside the short there is no layout to name.
    await seek(page, end + 1);
    t.is(await label.count(), 0);
    t.deepEqual(pageErrors, []);
  },
);
