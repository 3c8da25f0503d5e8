import test from 'ava';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { launchChromium, screenshotter, type Page } from './helpers/browser.js';
import { makeHalvesVideo, redBlueShares } from './helpers/media.js';
import { needing } from './helpers/requirements.js';
import { buildStudio, CHROMIUM_TOOL, signInToJobPage, studioUser } from './helpers/studio.js';
import { DEFAULT_DIRECTOR } from '@shorts/common/reframe/director';
import { planReframe } from '@shorts/common/reframe/camera';
import type { FramingOverride } from '@shorts/common/reframe/types';
import { oneSpeakerDetections } from './helpers/reframe-fixtures.js';

// Framing by hand in a real browser: the crop window dragged on the job page over a span is saved on
// the short, undone and redone, and a real render follows it (measured on its frames: the source's
// left half is red, its right half blue, and the camera framed the right); on a phone, a layout set
// from the panel.

let cluster: TestCluster;
let chromium: Awaited<ReturnType<typeof launchChromium>>;
let source: string;
const TOOLS = CHROMIUM_TOOL;

test.before(async () => {
  if (!Object.values(TOOLS).every(Boolean)) return;
  buildStudio();
  cluster = await startCluster('studio_framing');
  chromium = await launchChromium();
  source = path.join(cluster.dataDir, 'halves.mp4');
  await makeHalvesVideo(source, { seconds: 10, half: { width: 320, height: 360 }, gop: 25 });
  await cluster.startAgent();
});
test.after.always(async () => {
  await chromium?.close();
  await cluster?.close();
});

/** A speaker on the blue (right) side of a 640x360 source for all of 0-10 s. */
const detections = () =>
  oneSpeakerDetections({ sourceWidth: 640, sourceHeight: 360, seconds: 10, face: { x: 450, y: 120, width: 60, height: 80 } });

async function openFramingPage(email: string, viewport: { width: number; height: number }) {
  const { org, key } = await cluster.org({ plan: 'pro', credits: 10, name: `Framing ${email}` });
  await studioUser(cluster, org.id, email);
  const d = detections();
  const output = { width: 720, height: 1280 };
  const jobId = await insertCompletedJob(cluster.app, {
    organizationId: org.id,
    sourcePath: source,
    words: Array.from({ length: 9 }, (_, i) => ({ text: `word${i}`, start: i + 0.2, end: i + 0.8 })),
    width: 640,
    height: 360,
    durationSec: 10,
    shorts: [{ startTime: 0, endTime: 10, title: 'Halves', detections: d, reframe: planReframe(d, DEFAULT_DIRECTOR, output) }],
    reframePlan: { director: { ...DEFAULT_DIRECTOR }, output },
  });
  const { page, pageErrors } = await signInToJobPage(chromium, cluster.app.httpUrl, email, jobId, {
    ready: '[data-testid="framing-panel"]',
    viewport,
  });
  await page.waitForFunction(
    () => ((document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement | null)?.duration ?? 0) > 9,
  );
  const overrides = async () =>
    ((await cluster.api('GET', `/api/jobs/${jobId}`, { key })).body.data.shorts[0].reframe.overrides ?? []) as FramingOverride[];
  const until = <T>(check: (o: FramingOverride[]) => T | undefined | false, what: string) =>
    waitFor(async () => check(await overrides()), 15_000, what);
  return { page, pageErrors, key, jobId, until };
}

async function seek(page: Page, t: number): Promise<void> {
  await page.evaluate((time) => {
    (document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement).currentTime = time;
  }, t);
}

needing({ tools: TOOLS }).serial('a window dragged by hand is saved, undone, redone, and the render follows it', async (t) => {
  const shot = await screenshotter('studio-framing');
  const { page, pageErrors, key, jobId, until } = await openFramingPage('framing-desk@example.com', { width: 1280, height: 900 });

  // The camera frames the right (blue) side; at 6 s, over 5-10 s, the window is dragged to the far left.
  await seek(page, 6);
  await page.fill('[data-testid="framing-from"]', '5');
  // The playhead moving while a number is typed re-renders the panel: the typed value stays.
  await seek(page, 6.5);
  await page.waitForFunction(() => !(document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement).seeking);
  await page.waitForTimeout(200);
  t.is(await page.inputValue('[data-testid="framing-from"]'), '5', 'what is typed survives the playhead moving');
  await page.press('[data-testid="framing-from"]', 'Tab');
  await page.fill('[data-testid="framing-to"]', '10');
  await page.press('[data-testid="framing-to"]', 'Tab');
  const grip = page.locator('[data-testid="window-grip"]');
  await grip.scrollIntoViewIfNeeded();
  const before = (await page.locator('[data-testid="crop-rect"]').boundingBox())!;
  const g = (await grip.boundingBox())!;
  await page.mouse.move(g.x + g.width / 2, g.y + g.height / 2);
  await page.mouse.down();
  for (let i = 1; i <= 10; i++) await page.mouse.move(g.x + g.width / 2 - i * 60, g.y + g.height / 2);
  // While dragging, the player's window follows the pointer.
  const during = (await page.locator('[data-testid="crop-rect"]').boundingBox())!;
  t.true(during.x < before.x - 100, `the window moves with the pointer: ${before.x} → ${during.x}`);
  await page.mouse.up();

  const saved = await until((o) => o.length === 1 && o[0], 'the dragged window saved');
  t.like(saved, { start: 5, end: 10, kind: 'window' });
  t.is(saved.kind === 'window' ? saved.window.x : -1, 0, 'dragged to the left edge');
  await page.waitForSelector('[data-testid="framing-list"] >> text=window held');
  await shot(page, 'desktop-window-dragged');

  // Undo (button), then redo (keyboard): each is a saved edit.
  await page.click('[data-testid="framing-panel"] button:has-text("Undo framing")');
  await until((o) => o.length === 0, 'undone');
  await page.locator('body').click({ position: { x: 5, y: 5 } });
  await page.keyboard.press('Control+Shift+Z');
  await until((o) => o.length === 1 && o[0]!.kind === 'window', 'redone');
  await page.waitForSelector('[data-testid="framing-panel"] button:has-text("Undo framing"):not([disabled])');

  // A real render follows the window: the right (blue) half before 5 s, the left (red) one after.
  const created = await cluster.api('POST', '/api/render', { key, body: { id: jobId, target: 0, size: { width: 360, height: 640 } } });
  t.is(created.status, 201, JSON.stringify(created.body));
  const done = await waitFor(
    async () => {
      const r = await cluster.api('GET', `/api/render/${created.body.renderId}`, { key });
      return r.body.type === 'done' || r.body.type === 'error' ? r.body : undefined;
    },
    180_000,
    'render',
  );
  t.is(done.type, 'done', JSON.stringify(done));
  const file = path.join(cluster.dataDir, 'framed.mp4');
  await writeFile(file, Buffer.from(await (await fetch(done.url)).arrayBuffer()));
  const early = await redBlueShares(file, 2, 360, 640);
  const late = await redBlueShares(file, 7.5, 360, 640);
  t.true(early.blue > 0.85, `the camera's right half before the span: ${JSON.stringify(early)}`);
  t.true(late.red > 0.85, `the dragged window (left half) in the span: ${JSON.stringify(late)}`);
  t.deepEqual(pageErrors, []);
});

needing({ tools: TOOLS }).serial('on a phone, a layout set over the span is saved and undone', async (t) => {
  const shot = await screenshotter('studio-framing');
  const { page, pageErrors, until } = await openFramingPage('framing-phone@example.com', { width: 390, height: 844 });
  await seek(page, 3);
  await page.locator('[data-testid="framing-panel"]').scrollIntoViewIfNeeded();
  await page.click('[data-testid="framing-panel"] button:has-text("Fit")');
  const saved = await until((o) => o.length === 1 && o[0], 'the layout saved');
  t.like(saved, { start: 0, end: 10, kind: 'layout', layout: 'fit' });
  await page.waitForSelector('[data-testid="framing-list"] >> text=layout fit');
  await shot(page, 'phone-layout-fit');
  await page.click('[data-testid="framing-panel"] button:has-text("Undo")');
  await until((o) => o.length === 0, 'undone');
  t.deepEqual(pageErrors, []);
});
