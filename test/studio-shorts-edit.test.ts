import test from 'ava';
import path from 'node:path';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { launchChromium, screenshotter, type Page } from './helpers/browser.js';
import { makeTestVideo } from './helpers/media.js';
import { needing } from './helpers/requirements.js';
import type { Word } from '@shorts/common/text/transcript';
import { buildStudio, CHROMIUM_TOOL, signInToJobPage, studioUser } from './helpers/studio.js';
import { bearerJobSchema } from '@shorts/common/api/jobs';

// Shorts edited in place on the job page: the out handle dragged on the timeline, the start set at
// the playhead, a title saved, a short added and one removed; the API shows each change on the same
// job, and no credit moves.

let cluster: TestCluster;
let chromium: Awaited<ReturnType<typeof launchChromium>>;
const TOOLS = CHROMIUM_TOOL;
const WORDS: Word[] = Array.from({ length: 20 }, (_, i) => ({ text: `word${i}`, start: i + 0.2, end: i + 0.8 }));

test.before(async () => {
  if (!Object.values(TOOLS).every(Boolean)) return;
  buildStudio();
  cluster = await startCluster('studio_shorts_edit');
  chromium = await launchChromium();
});
test.after.always(async () => {
  await chromium?.close();
  await cluster?.close();
});

/** A signed-in job page of a 20 s source with two shorts (0-10 s, 10-20 s), at the given viewport. */
async function openTrimPage(email: string, viewport: { width: number; height: number }) {
  const source = path.join(cluster.dataDir, `${email}.mp4`);
  await makeTestVideo(source, { seconds: 20, width: 640, height: 360 });
  const { org, key } = await cluster.org({ plan: 'pro', credits: 10, name: `Trim Org ${email}` });
  await studioUser(cluster, org.id, email);
  const jobId = await insertCompletedJob(cluster.app, {
    organizationId: org.id,
    sourcePath: source,
    words: WORDS,
    width: 640,
    height: 360,
    durationSec: 20.5,
    shorts: [
      { startTime: 0, endTime: 10, title: 'Opening' },
      { startTime: 10, endTime: 20, title: 'Closing' },
    ],
  });
  const credits = async () =>
    (await cluster.app.db.one<{ c: string; r: string }>(`SELECT credits AS c, reserved_credits AS r FROM organizations WHERE id = $1`, [
      org.id,
    ]))!;
  const shorts = async () =>
    (await cluster.api('GET', `/api/jobs/${jobId}`, { key })).body.data.shorts as Array<{
      id: string;
      content: string;
      startTime: number;
      endTime: number;
    }>;
  const until = <T>(check: (s: Awaited<ReturnType<typeof shorts>>) => T | undefined, what: string) =>
    waitFor(async () => check(await shorts()), 10_000, what);

  const base = cluster.app.httpUrl;
  const { page, pageErrors } = await signInToJobPage(chromium, base, email, jobId, { ready: '[data-testid="handle-out"]', viewport });
  await page.waitForFunction(
    () => ((document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement | null)?.duration ?? 0) > 19,
  );
  return { page, org, credits, until, pageErrors };
}

/** Drags the selected short's out handle to `to` seconds of the source's timeline. */
async function dragOutHandle(page: Page, to: number): Promise<void> {
  await page.locator('.timeline').scrollIntoViewIfNeeded();
  const timeline = (await page.locator('.timeline').boundingBox())!;
  const handle = (await page.locator('[data-testid="handle-out"]').boundingBox())!;
  const videoDuration = await page.evaluate(
    () => (document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement).duration,
  );
  const y = handle.y + handle.height / 2;
  await page.mouse.move(handle.x + handle.width / 2, y);
  await page.mouse.down();
  await page.mouse.move(timeline.x + (to / videoDuration) * timeline.width, y, { steps: 8 });
  await page.mouse.up();
}

needing({ tools: TOOLS }).serial(
  'drag the out handle, start at the playhead, rename, add and remove shorts: the same job changes, no charge',
  async (t) => {
    const { page, org, credits, until, pageErrors } = await openTrimPage('trim@studio.test', { width: 1366, height: 800 });
    const creditsBefore = await credits();
    const shot = await screenshotter('studio-shorts-edit');

    // Drag the first short's out handle from 10 s to about 8 s of the 20 s timeline.
    await dragOutHandle(page, 8);
    const dragged = await until((s) => (s[0]!.endTime !== 10 ? s[0] : undefined), 'the dragged end saved');
    t.true(Math.abs(dragged.endTime - 8) <= 0.3, `end dragged to ${dragged.endTime}`);
    t.is(dragged.startTime, 0);
    await shot(page, 'out-handle-dragged');

    // Start at the playhead.
    await page.evaluate(() => {
      (document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement).currentTime = 3;
    });
    await page.waitForFunction(
      () => Math.abs((document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement).currentTime - 3) < 0.05,
    );
    // The page's playhead (what the button reads) has caught up with the player.
    await page.waitForSelector('p.muted >> text=/Playhead 0:03\\.0/');
    await page.click('button:has-text("Start at playhead")');
    const started = await until((s) => (s[0]!.startTime === 3 ? s[0] : undefined), 'the start set at the playhead');
    t.is(started.endTime, dragged.endTime, 'the end stays where it was dragged');
    // The page has the saved short before anything else is typed (a reload landing later would reset
    // the form, and the preview would move the playhead back into the short).
    await page.waitForFunction(() => (document.querySelector('#adj-start') as HTMLInputElement | null)?.value === '3');

    // Rename in place. The save reloads the job, whose source video's URL is signed afresh: the player
    // keeps its source, so it stays paused at 5 s instead of loading the video again from 0:00.
    const player = () =>
      page.evaluate(() => {
        const v = document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement;
        return { src: v.src, time: v.currentTime, paused: v.paused };
      });
    await page.evaluate(() => {
      (document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement).currentTime = 5;
    });
    await page.waitForSelector('p.muted >> text=/Playhead 0:05\\.0/');
    const before = await player();
    // The signature's expiry counts whole seconds: a second after the last read of the job, the next
    // read signs a URL different from any the page has had.
    await new Promise((r) => setTimeout(r, 1100));
    await page.fill('#adj-title', 'Cold open');
    const reload = page.waitForResponse((r) => r.request().method() === 'GET' && /^\/api\/jobs\/[^/]+$/.test(new URL(r.url()).pathname));
    await page.click('button:has-text("Save short")');
    // What the studio reads is what the server's schema says (the studio's types are that schema's).
    const reloaded = bearerJobSchema.safeParse(await (await reload).json());
    t.true(reloaded.success, reloaded.error?.message);
    const reloadedSource = reloaded.data!.data!.source!.url;
    await until((s) => (s[0]!.content === 'Cold open' ? true : undefined), 'the title saved');
    await page.waitForSelector('.shorts-list >> text=Cold open');
    t.not(reloadedSource, before.src, 'the reload signed the source again');
    t.is(new URL(reloadedSource).pathname, new URL(before.src).pathname);
    await new Promise((r) => setTimeout(r, 500));
    const after = await player();
    t.is(after.src, before.src, 'the player kept its source');
    t.true(Math.abs(after.time - 5) < 0.05 && after.paused, `the player held its place: ${JSON.stringify(after)}`);
    await page.waitForSelector('p.muted >> text=/Playhead 0:05\\.0/');

    // Add a short at the playhead (14 s): it takes the next id and is selected.
    await page.evaluate(() => {
      (document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement).currentTime = 14;
    });
    await page.waitForFunction(
      () => Math.abs((document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement).currentTime - 14) < 0.05,
    );
    await page.waitForSelector('p.muted >> text=/Playhead 0:14\\.0/');
    await page.click('button:has-text("Add short")');
    const added = await until((s) => (s.length === 3 ? s[2] : undefined), 'the short added');
    t.is(added.id, '2');
    t.is(added.startTime, 14);
    await page.waitForSelector('.shorts-list button[aria-pressed="true"] >> text=Short at');
    await shot(page, 'short-added');

    // Remove the first short: the others keep their ids.
    await page.click('.shorts-list button:has-text("Cold open")');
    await page.waitForFunction(() => (document.querySelector('#adj-title') as HTMLInputElement).value === 'Cold open');
    await page.click('button:has-text("Remove short")');
    const left = await until((s) => (s.length === 2 ? s : undefined), 'the short removed');
    t.deepEqual(
      left.map((s) => [s.id, s.content]),
      [
        ['1', 'Closing'],
        ['2', added.content],
      ],
    );
    await page.waitForFunction(() => document.querySelectorAll('.shorts-list li').length === 2);
    t.false(await page.locator('.shorts-list button:has-text("Cold open")').isVisible());
    await shot(page, 'short-removed');

    t.deepEqual(await credits(), creditsBefore, 'no credits charged or reserved');
    t.is(
      (await cluster.app.db.one<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE organization_id = $1`, [org.id]))!.n,
      1,
      'no new job',
    );
    t.deepEqual(pageErrors, []);
    await page.close();
  },
);

needing({ tools: TOOLS }).serial(
  'on a phone (390x844) the out handle is dragged and a short added at the playhead on the same job, no charge',
  async (t) => {
    const { page, org, credits, until, pageErrors } = await openTrimPage('trim-phone@studio.test', { width: 390, height: 844 });
    const creditsBefore = await credits();
    const shot = await screenshotter('studio-shorts-edit');
    await dragOutHandle(page, 6);
    const dragged = await until((s) => (s[0]!.endTime !== 10 ? s[0] : undefined), 'the dragged end saved');
    t.true(Math.abs(dragged.endTime - 6) <= 0.5, `end dragged to ${dragged.endTime}`);
    // The saved edit reloads the job, signing its source video's URL afresh: the player keeps its place
    // (it used to load the video again from 0:00, and a short was added at 0).
    const playhead = () =>
      page.evaluate(() => (document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement).currentTime);
    await page.evaluate(() => {
      (document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement).currentTime = 12;
    });
    await waitFor(async () => (Math.abs((await playhead()) - 12) <= 0.05 ? true : undefined), 10_000, 'the playhead at 12 s');
    await new Promise((r) => setTimeout(r, 1000));
    t.true(Math.abs((await playhead()) - 12) <= 0.05, 'the playhead held at 12 s');
    await page.waitForSelector('p.muted >> text=/Playhead 0:12\\.0/');
    await page.click('button:has-text("Add short")');
    const added = await until((s) => (s.length === 3 ? s[2] : undefined), 'the short added');
    t.is(added.startTime, 12);
    await page.waitForSelector('.shorts-list button[aria-pressed="true"] >> text=Short at');
    t.true(await page.evaluate(() => document.documentElement.scrollWidth <= 390), 'no sideways scrolling');
    await shot(page, 'phone-short-added');
    t.deepEqual(await credits(), creditsBefore, 'no credits charged or reserved');
    t.is(
      (await cluster.app.db.one<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE organization_id = $1`, [org.id]))!.n,
      1,
      'no new job',
    );
    t.deepEqual(pageErrors, []);
    await page.close();
  },
);
