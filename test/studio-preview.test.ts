import test from 'ava';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { CHROMIUM_PATH, launchChromium, screenshotter, type Page } from './helpers/browser.js';
import { FFMPEG } from './helpers/media.js';
import { needing } from './helpers/requirements.js';
import { repoRoot } from '../common/src/paths.js';
import { createUser } from '../coordinator/src/tenancy/tenancy.js';
import { setPassword } from '../coordinator/src/tenancy/sessions.js';
import { insertFiles } from '../coordinator/src/files/files.js';
import type { Word } from '../common/src/text/transcript.js';

// What you see is what you get: the job page's live preview opens on the short's first frame, draws
// the brand preset's watermark where the render puts it, lets the user drag and resize it (the px
// fields of the output frame follow, and the render request carries them), and its caption follows
// the caption position control.

const run = promisify(execFile);
let cluster: TestCluster;
let chromium: Awaited<ReturnType<typeof launchChromium>>;
const TOOLS = { [`chromium (${CHROMIUM_PATH})`]: existsSync(CHROMIUM_PATH) };
const PASSWORD = 'a long studio password';
const SHORT_START = 2;
const WORDS: Word[] = [{ text: 'hello', start: 2.0, end: 3.0 }, { text: 'there', start: 3.0, end: 4.0 }];
// The preset's watermark: a 200x100 logo, 300 px wide at (40, 40) of a 1080x1920 frame, so 150 px high.
const FRAME = { width: 1080, height: 1920 };
const LOGO = { left: 40, top: 40, width: 300, height: 150 };

test.before(async () => {
  if (!Object.values(TOOLS).every(Boolean)) return;
  const build = spawnSync(process.execPath, [path.join(repoRoot(), 'scripts/build-studio.mjs')], { stdio: 'inherit' });
  if (build.status !== 0) throw new Error('the studio build failed');
  cluster = await startCluster('studio_preview');
  chromium = await launchChromium();
});
test.after.always(async () => {
  await chromium?.close();
  await cluster?.close();
});

async function signedInJobPage(email: string, plan = 'pro'): Promise<{ page: Page; jobId: string; orgId: string; pageErrors: string[] }> {
  const source = path.join(cluster.dataDir, `${email}.mp4`);
  await run(FFMPEG, ['-y', '-v', 'error', '-f', 'lavfi', '-i', 'testsrc=s=640x360:r=25:d=6', '-f', 'lavfi', '-i', 'sine=d=6',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '5', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', source]);
  const { org, key } = await cluster.org({ plan, credits: 10, name: `Org ${email}` });
  const user = await createUser(cluster.app.db, { email, organizationId: org.id, role: 'owner' });
  await setPassword(cluster.app.db, user.id, PASSWORD);
  const logo = path.join(cluster.dataDir, 'logo.png');
  await writeFile(logo, await sharp({ create: { width: 200, height: 100, channels: 4, background: { r: 255, g: 0, b: 0, alpha: 1 } } }).png().toBuffer());
  const logoKey = `orgs/${org.id}/logo.png`;
  const { size } = await cluster.app.store.put(logoKey, { path: logo });
  const [logoId] = await cluster.app.db.tx((c) => insertFiles(c, [{ organizationId: org.id, name: 'logo.png', type: 'image', sizeBytes: size, objectKey: logoKey }]));
  const preset = await cluster.api('POST', '/api/organizations/brandings', {
    key,
    body: {
      name: 'Channel look', preset: 'DEFAULT', size: { width: FRAME.width, height: FRAME.height }, isDefault: true,
      options: { waterMark: { fileAppId: logoId, left: `${LOGO.left}px`, top: `${LOGO.top}px`, width: `${LOGO.width}px`, opacity: '0.8' } },
    },
  });
  if (preset.status >= 300) throw new Error(JSON.stringify(preset.body));
  const jobId = await insertCompletedJob(cluster.app, {
    organizationId: org.id, sourcePath: source, words: WORDS, width: 640, height: 360, shorts: [{ startTime: SHORT_START, endTime: 5, title: 'Second half' }],
  });

  await chromium.browser.clearCookies();
  const page = await chromium.browser.newPage();
  // Tall enough that the whole preview is on screen: pointer gestures need it in the viewport.
  await page.setViewportSize({ width: 1366, height: 1400 });
  const pageErrors: string[] = [];
  page.on('pageerror', (err) => pageErrors.push(err.message));
  const base = cluster.app.httpUrl;
  await page.goto(`${base}/`);
  await page.fill('#email', email);
  await page.fill('#password', PASSWORD);
  await page.press('#password', 'Enter');
  await page.waitForSelector('h1 >> text=Jobs');
  await page.goto(`${base}/studio/#/jobs/${jobId}`);
  await page.waitForSelector('[data-testid="caption-preview"]');
  return { page, jobId, orgId: org.id, pageErrors };
}

const box = async (page: Page, selector: string) => {
  const b = await page.locator(selector).first().boundingBox();
  if (!b) throw new Error(`${selector} is not shown`);
  return b;
};
const fieldValue = async (page: Page, id: string) => Number(await page.inputValue(id));

// Serial: the tests sign in as different users in one browser profile, which shares the cookie.
needing({ tools: TOOLS }).serial('the preview opens on the short\'s first frame and draws the watermark where the render puts it; dragging and resizing it sets the px fields and the render request', async (t) => {
  const { page, orgId, pageErrors } = await signedInJobPage('wysiwyg@studio.test');
  const shot = await screenshotter('studio-preview');

  // The source player was moved to the short's start, not left at 0:00.
  const at = await waitFor(async () => {
    const time = await page.evaluate(() => (document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement | null)?.currentTime ?? 0);
    return Math.abs(time - SHORT_START) < 0.05 ? time : undefined;
  }, 15_000, 'the player at the short\'s start');
  t.true(Math.abs(at - SHORT_START) < 0.05, `player at ${at}`);

  // The watermark at (40, 40), 300x150 of 1080x1920, scaled to the preview.
  await page.waitForSelector('[data-testid="watermark-fields"]', { timeout: 15_000 });
  const preview = await box(page, '[data-testid="caption-preview"]');
  const k = preview.width / FRAME.width;
  t.true(Math.abs(preview.height / preview.width - FRAME.height / FRAME.width) < 0.01, 'the preview has the frame\'s shape');
  const wm = await box(page, '[data-testid="preview-watermark"]');
  t.true(Math.abs(wm.x - preview.x - LOGO.left * k) < 1, `left ${wm.x - preview.x} vs ${LOGO.left * k}`);
  t.true(Math.abs(wm.y - preview.y - LOGO.top * k) < 1, `top ${wm.y - preview.y} vs ${LOGO.top * k}`);
  t.true(Math.abs(wm.width - LOGO.width * k) < 1, `width ${wm.width} vs ${LOGO.width * k}`);
  t.true(Math.abs(wm.height - LOGO.height * k) < 1, `height ${wm.height} vs ${LOGO.height * k}`);
  t.deepEqual([await fieldValue(page, '#wm-x'), await fieldValue(page, '#wm-y'), await fieldValue(page, '#wm-width')], [LOGO.left, LOGO.top, LOGO.width]);
  t.regex((await page.locator('[data-testid="watermark-fields"]').textContent())!, /1080x1920/, 'the frame the px are of is named');
  await shot(page, 'watermark-placed');

  // Drag the watermark 40 px right and 100 px down on screen: the fields move by that in output px.
  const grab = { x: wm.x + wm.width / 2, y: wm.y + wm.height / 2 };
  await page.mouse.move(grab.x, grab.y);
  await page.mouse.down();
  await page.mouse.move(grab.x + 20, grab.y + 50, { steps: 4 });
  await page.mouse.move(grab.x + 40, grab.y + 100, { steps: 4 });
  await page.mouse.up();
  const moved = { x: await fieldValue(page, '#wm-x'), y: await fieldValue(page, '#wm-y') };
  t.true(Math.abs(moved.x - (LOGO.left + 40 / k)) <= 2, `x ${moved.x}, expected ${LOGO.left + 40 / k}`);
  t.true(Math.abs(moved.y - (LOGO.top + 100 / k)) <= 2, `y ${moved.y}, expected ${LOGO.top + 100 / k}`);
  t.is(await fieldValue(page, '#wm-width'), LOGO.width, 'a move keeps the size');
  const afterMove = await box(page, '[data-testid="preview-watermark"]');
  t.true(Math.abs(afterMove.x - wm.x - 40) < 1.5 && Math.abs(afterMove.y - wm.y - 100) < 1.5, 'the drawn watermark followed the pointer');

  // Resize from the corner by 30 px on screen: the width grows by 30 / k output px, the height with it.
  const handle = await box(page, '[data-testid="watermark-resize"]');
  await page.mouse.move(handle.x + handle.width / 2, handle.y + handle.height / 2);
  await page.mouse.down();
  await page.mouse.move(handle.x + handle.width / 2 + 30, handle.y + handle.height / 2 + 10, { steps: 5 });
  await page.mouse.up();
  const width = await fieldValue(page, '#wm-width');
  t.true(Math.abs(width - (LOGO.width + 30 / k)) <= 2, `width ${width}, expected ${LOGO.width + 30 / k}`);
  const resized = await box(page, '[data-testid="preview-watermark"]');
  t.true(Math.abs(resized.height - (width / 2) * k) < 1.5, 'the height keeps the image\'s aspect ratio');
  t.regex((await page.locator('[data-testid="watermark-summary"]').textContent())!, new RegExp(`x ${moved.x} px, y ${moved.y} px, ${width}x${Math.round(width / 2)} px of 1080x1920`));

  // A typed value moves it too.
  await page.fill('#wm-x', '500');
  await page.press('#wm-x', 'Tab');
  t.true(Math.abs((await box(page, '[data-testid="preview-watermark"]')).x - preview.x - 500 * k) < 1, 'a typed x moves the drawn watermark');
  await shot(page, 'watermark-moved');

  // The render request carries the box as px of the output frame, with the preset's other settings.
  const request = page.waitForRequest((r) => r.url().endsWith('/api/render') && r.method() === 'POST');
  const response = page.waitForResponse((r) => r.url().endsWith('/api/render') && r.request().method() === 'POST');
  await page.click('button.primary:has-text("Render")');
  const body = JSON.parse((await request).postData()!);
  t.is((await response).status(), 201);
  t.like(body.options.waterMark, { left: '500px', top: `${moved.y}px`, width: `${width}px`, opacity: '0.8' });
  t.is(body.options.waterMark.bottom, undefined);

  // Saved to the brand preset, a reload shows it where it was left.
  await page.click('button:has-text("Save watermark position")');
  const saved = await waitFor(async () => {
    const row = await cluster.app.db.one<{ wm: Record<string, string> }>(`SELECT options->'waterMark' AS wm FROM brand_presets WHERE organization_id = $1`, [orgId]);
    return row?.wm.left === '500px' ? row.wm : undefined;
  }, 10_000, 'the preset saved');
  t.like(saved, { left: '500px', top: `${moved.y}px`, width: `${width}px`, opacity: '0.8' });
  await page.reload();
  await page.waitForSelector('[data-testid="watermark-fields"]', { timeout: 15_000 });
  t.deepEqual([await fieldValue(page, '#wm-x'), await fieldValue(page, '#wm-y'), await fieldValue(page, '#wm-width')], [500, moved.y, width]);
  t.deepEqual(pageErrors, []);
  await page.close();
});

needing({ tools: TOOLS }).serial('the caption position control moves the preview\'s caption to the top, the middle or the lower third; on a free plan the px are of the 720x1280 frame it renders', async (t) => {
  const { page, pageErrors } = await signedInJobPage('captions@studio.test', 'free');
  // The preset asks for 1080x1920, which a free plan does not render: its 300 px are of 720x1280.
  await page.waitForSelector('[data-testid="watermark-fields"]', { timeout: 15_000 });
  t.regex((await page.locator('[data-testid="watermark-fields"]').textContent())!, /of the 720x1280 output frame/);
  const framePreview = await box(page, '[data-testid="caption-preview"]');
  t.true(Math.abs((await box(page, '[data-testid="preview-watermark"]')).width - (LOGO.width / 720) * framePreview.width) < 1, 'drawn at 300 of 720 px');
  const shot = await screenshotter('studio-preview');
  // At the short's start "hello" is spoken, so a caption page is on the preview.
  await page.waitForSelector('[data-testid="preview-caption"]', { timeout: 15_000 });
  t.is(await page.inputValue('#caption-position'), 'bottom', 'lower third by default');
  const preview = await box(page, '[data-testid="caption-preview"]');
  const third = async () => {
    const c = await box(page, '[data-testid="preview-caption"]');
    return Math.floor(((c.y + c.height / 2 - preview.y) / preview.height) * 3);
  };
  t.is(await third(), 2, 'lower third');
  await page.selectOption('#caption-position', 'top');
  t.is(await third(), 0, 'top third');
  await shot(page, 'caption-top');
  await page.selectOption('#caption-position', 'center');
  t.is(await third(), 1, 'middle third');

  // The render asks for the band the preview shows.
  const request = page.waitForRequest((r) => r.url().endsWith('/api/render') && r.method() === 'POST');
  await page.click('button.primary:has-text("Render")');
  const body = JSON.parse((await request).postData()!);
  t.deepEqual(body.options.style.at(-1), { property: 'position', value: 'center' });
  t.deepEqual(pageErrors, []);
  await page.close();
});
