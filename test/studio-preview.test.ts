import test from 'ava';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { launchChromium, screenshotter, type Page } from './helpers/browser.js';
import { makeTestVideo } from './helpers/media.js';
import { needing } from './helpers/requirements.js';
import { insertFiles } from '../coordinator/src/files/files.js';
import type { Word } from '@shorts/common/text/transcript';
import { planReframe } from '@shorts/common/reframe/camera';
import { DEFAULT_DIRECTOR } from '@shorts/common/reframe/director';
import type { Reframe, ShortDetections } from '@shorts/common/reframe/types';
import { buildStudio, CHROMIUM_TOOL, signInToJobPage, studioUser } from './helpers/studio.js';

// What you see is what you get: the job page's live preview opens on the short's first frame, draws
// the brand preset's watermark where the render puts it, lets the user drag and resize it (the px
// fields of the output frame follow, and the render request carries them), and its caption follows
// the caption position control.

let cluster: TestCluster;
let chromium: Awaited<ReturnType<typeof launchChromium>>;
const TOOLS = CHROMIUM_TOOL;
const SHORT_START = 2;
const WORDS: Word[] = [
  { text: 'hello', start: 2.0, end: 3.0 },
  { text: 'there', start: 3.0, end: 4.0 },
];
// The preset's watermark: a 200x100 logo, 300 px wide at (40, 40) of a 1080x1920 frame, so 150 px high.
const FRAME = { width: 1080, height: 1920 };
const LOGO = { left: 40, top: 40, width: 300, height: 150 };

test.before(async () => {
  if (!Object.values(TOOLS).every(Boolean)) return;
  buildStudio();
  cluster = await startCluster('studio_preview');
  chromium = await launchChromium();
});
test.after.always(async () => {
  await chromium?.close();
  await cluster?.close();
});

async function signedInJobPage(
  email: string,
  plan = 'pro',
  viewport = { width: 1366, height: 1400 },
  framed?: Pick<Parameters<typeof insertCompletedJob>[1], 'reframePlan'> & { reframe: Reframe; detections: ShortDetections },
): Promise<{ page: Page; jobId: string; orgId: string; key: string; pageErrors: string[] }> {
  const source = path.join(cluster.dataDir, `${email}.mp4`);
  await makeTestVideo(source, { seconds: 6, width: 640, height: 360, gop: 5 });
  const { org, key } = await cluster.org({ plan, credits: 10, name: `Org ${email}` });
  await studioUser(cluster, org.id, email);
  const logo = path.join(cluster.dataDir, 'logo.png');
  await writeFile(
    logo,
    await sharp({ create: { width: 200, height: 100, channels: 4, background: { r: 255, g: 0, b: 0, alpha: 1 } } })
      .png()
      .toBuffer(),
  );
  const logoKey = `orgs/${org.id}/logo.png`;
  const { size } = await cluster.app.store.put(logoKey, { path: logo });
  const [logoId] = await cluster.app.db.tx((c) =>
    insertFiles(c, [{ organizationId: org.id, name: 'logo.png', type: 'image', sizeBytes: size, objectKey: logoKey }]),
  );
  const preset = await cluster.api('POST', '/api/organizations/brandings', {
    key,
    body: {
      name: 'Channel look',
      preset: 'DEFAULT',
      size: { width: FRAME.width, height: FRAME.height },
      isDefault: true,
      options: { waterMark: { fileAppId: logoId, left: `${LOGO.left}px`, top: `${LOGO.top}px`, width: `${LOGO.width}px`, opacity: '0.8' } },
    },
  });
  if (preset.status >= 300) throw new Error(JSON.stringify(preset.body));
  const jobId = await insertCompletedJob(cluster.app, {
    organizationId: org.id,
    sourcePath: source,
    words: WORDS,
    width: 640,
    height: 360,
    shorts: [
      {
        startTime: SHORT_START,
        endTime: 5,
        title: 'Second half',
        ...(framed ? { reframe: framed.reframe, detections: framed.detections } : {}),
      },
    ],
    ...(framed ? { reframePlan: framed.reframePlan } : {}),
  });

  // Tall enough that the whole preview is on screen: pointer gestures need it in the viewport.
  const base = cluster.app.httpUrl;
  const { page, pageErrors } = await signInToJobPage(chromium, base, email, jobId, { ready: '[data-testid="caption-preview"]', viewport });
  return { page, jobId, orgId: org.id, key, pageErrors };
}

const box = async (page: Page, selector: string) => {
  const b = await page.locator(selector).first().boundingBox();
  if (!b) throw new Error(`${selector} is not shown`);
  return b;
};
const fieldValue = async (page: Page, id: string) => Number(await page.inputValue(id));

// Serial: the tests sign in as different users in one browser profile, which shares the cookie.
needing({ tools: TOOLS }).serial(
  "the preview opens on the short's first frame and draws the watermark where the render puts it; dragging and resizing it sets the px fields and the render request",
  async (t) => {
    const { page, orgId, pageErrors } = await signedInJobPage('wysiwyg@studio.test');
    const shot = await screenshotter('studio-preview');

    // The source player was moved to the short's start, not left at 0:00.
    const at = await waitFor(
      async () => {
        const time = await page.evaluate(
          () => (document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement | null)?.currentTime ?? 0,
        );
        return Math.abs(time - SHORT_START) < 0.05 ? time : undefined;
      },
      15_000,
      "the player at the short's start",
    );
    t.true(Math.abs(at - SHORT_START) < 0.05, `player at ${at}`);

    // The watermark at (40, 40), 300x150 of 1080x1920, scaled to the preview.
    await page.waitForSelector('[data-testid="watermark-fields"]', { timeout: 15_000 });
    const preview = await box(page, '[data-testid="caption-preview"]');
    const k = preview.width / FRAME.width;
    t.true(Math.abs(preview.height / preview.width - FRAME.height / FRAME.width) < 0.01, "the preview has the frame's shape");
    const wm = await box(page, '[data-testid="preview-watermark"]');
    t.true(Math.abs(wm.x - preview.x - LOGO.left * k) < 1, `left ${wm.x - preview.x} vs ${LOGO.left * k}`);
    t.true(Math.abs(wm.y - preview.y - LOGO.top * k) < 1, `top ${wm.y - preview.y} vs ${LOGO.top * k}`);
    t.true(Math.abs(wm.width - LOGO.width * k) < 1, `width ${wm.width} vs ${LOGO.width * k}`);
    t.true(Math.abs(wm.height - LOGO.height * k) < 1, `height ${wm.height} vs ${LOGO.height * k}`);
    t.deepEqual(
      [await fieldValue(page, '#wm-x'), await fieldValue(page, '#wm-y'), await fieldValue(page, '#wm-width')],
      [LOGO.left, LOGO.top, LOGO.width],
    );
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
    t.true(Math.abs(resized.height - (width / 2) * k) < 1.5, "the height keeps the image's aspect ratio");
    t.regex(
      (await page.locator('[data-testid="watermark-summary"]').textContent())!,
      new RegExp(`x ${moved.x} px, y ${moved.y} px, ${width}x${Math.round(width / 2)} px of 1080x1920`),
    );

    // A typed value moves it too.
    await page.fill('#wm-x', '500');
    await page.press('#wm-x', 'Tab');
    t.true(
      Math.abs((await box(page, '[data-testid="preview-watermark"]')).x - preview.x - 500 * k) < 1,
      'a typed x moves the drawn watermark',
    );
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
    const saved = await waitFor(
      async () => {
        const row = await cluster.app.db.one<{ wm: Record<string, string> }>(
          `SELECT options->'waterMark' AS wm FROM brand_presets WHERE organization_id = $1`,
          [orgId],
        );
        return row?.wm.left === '500px' ? row.wm : undefined;
      },
      10_000,
      'the preset saved',
    );
    t.like(saved, { left: '500px', top: `${moved.y}px`, width: `${width}px`, opacity: '0.8' });
    await page.reload();
    await page.waitForSelector('[data-testid="watermark-fields"]', { timeout: 15_000 });
    t.deepEqual(
      [await fieldValue(page, '#wm-x'), await fieldValue(page, '#wm-y'), await fieldValue(page, '#wm-width')],
      [500, moved.y, width],
    );
    t.deepEqual(pageErrors, []);
    await page.close();
  },
);

needing({ tools: TOOLS }).serial(
  "the caption position control moves the preview's caption to the top, the middle or the lower third; on a free plan the px are of the 720x1280 frame it renders",
  async (t) => {
    const { page, pageErrors } = await signedInJobPage('captions@studio.test', 'free');
    // The preset asks for 1080x1920, which a free plan does not render: its 300 px are of 720x1280.
    await page.waitForSelector('[data-testid="watermark-fields"]', { timeout: 15_000 });
    t.regex((await page.locator('[data-testid="watermark-fields"]').textContent())!, /of the 720x1280 output frame/);
    const framePreview = await box(page, '[data-testid="caption-preview"]');
    t.true(
      Math.abs((await box(page, '[data-testid="preview-watermark"]')).width - (LOGO.width / 720) * framePreview.width) < 1,
      'drawn at 300 of 720 px',
    );
    const shot = await screenshotter('studio-preview');
    // At the short's start "hello" is spoken, so a caption page is on the preview.
    await page.waitForSelector('[data-testid="preview-caption"]', { timeout: 15_000 });
    t.is(await page.inputValue('#caption-position'), 'auto', 'automatic by default');
    t.is(await page.locator('#caption-position option:checked').innerText(), 'Automatic: lower third');
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
  },
);

needing({ tools: TOOLS }).serial(
  'on a phone (390x844) the preview comes first; the watermark dragged there sets the px fields, and the caption position moves the caption',
  async (t) => {
    const { page, pageErrors } = await signedInJobPage('phone-preview@studio.test', 'pro', { width: 390, height: 844 });
    const shot = await screenshotter('studio-preview');
    await page.waitForSelector('[data-testid="watermark-fields"]', { timeout: 15_000 });
    await page.waitForSelector('[data-testid="preview-caption"]', { timeout: 15_000 });
    await page.locator('[data-testid="caption-preview"]').scrollIntoViewIfNeeded();
    const preview = await box(page, '[data-testid="caption-preview"]');
    const k = preview.width / FRAME.width;
    const wm = await box(page, '[data-testid="preview-watermark"]');
    const grab = { x: wm.x + wm.width / 2, y: wm.y + wm.height / 2 };
    await page.mouse.move(grab.x, grab.y);
    await page.mouse.down();
    await page.mouse.move(grab.x + 30, grab.y + 60, { steps: 6 });
    await page.mouse.up();
    const moved = { x: await fieldValue(page, '#wm-x'), y: await fieldValue(page, '#wm-y') };
    t.true(Math.abs(moved.x - (LOGO.left + 30 / k)) <= 3, `x ${moved.x}, expected ${LOGO.left + 30 / k}`);
    t.true(Math.abs(moved.y - (LOGO.top + 60 / k)) <= 3, `y ${moved.y}, expected ${LOGO.top + 60 / k}`);
    const third = async () => {
      const c = await box(page, '[data-testid="preview-caption"]');
      return Math.floor(((c.y + c.height / 2 - preview.y) / preview.height) * 3);
    };
    t.is(await third(), 2, 'lower third');
    await page.selectOption('#caption-position', 'top');
    t.is(await third(), 0, 'top third');
    t.true(await page.evaluate(() => document.documentElement.scrollWidth <= 390), 'no sideways scrolling');
    await shot(page, 'phone-preview');
    t.deepEqual(pageErrors, []);
    await page.close();
  },
);

/** The short (2-5 s of the 640x360 source) with its speaker's face low in the picture: in the lower third of the 9:16 window. */
function lowFaceShort() {
  const times = Array.from({ length: 30 }, (_, i) => SHORT_START + i / 10);
  const face = { x: 280, y: 250, width: 70, height: 85 };
  const detections: ShortDetections = {
    version: 1,
    sourceWidth: 640,
    sourceHeight: 360,
    start: SHORT_START,
    end: 5,
    sampleFps: 10,
    speech: [{ start: 2.1, end: 4.9 }],
    tracks: [{ id: 1, samples: times.map((time) => ({ time, box: face, score: 0.95, mouthActivity: 0.3 })) }],
    turns: [{ start: 2.1, end: 4.9, trackId: 1 }],
  };
  const output = { width: FRAME.width, height: FRAME.height };
  return {
    reframe: planReframe(detections, DEFAULT_DIRECTOR, output),
    detections,
    reframePlan: { director: { ...DEFAULT_DIRECTOR }, output },
  };
}

needing({ tools: TOOLS }).serial(
  'with the framed face in the lower third, the automatic caption band is the top in the preview and in the render asked for',
  async (t) => {
    const { page, jobId, key, pageErrors } = await signedInJobPage('face-low@studio.test', 'pro', undefined, lowFaceShort());
    const shot = await screenshotter('studio-preview');
    // Beside the short in the list, its quality figure: the speaker on screen for all of its speech.
    const quality = page.locator('.shorts-list [data-testid="reframe-quality"]');
    await quality.waitFor();
    t.is(await quality.innerText(), 'Speaker on screen 100 % · face in frame 100 % · least sure 2.1–4.9 s (1.00)');
    t.is(await quality.getAttribute('data-warn'), 'false');
    await page.waitForSelector('[data-testid="preview-caption"]', { timeout: 15_000 });
    t.is(await page.inputValue('#caption-position'), 'auto');
    t.is(await page.locator('#caption-position option:checked').innerText(), 'Automatic: top, away from the face');
    const preview = await box(page, '[data-testid="caption-preview"]');
    const c = await box(page, '[data-testid="preview-caption"]');
    t.is(Math.floor(((c.y + c.height / 2 - preview.y) / preview.height) * 3), 0, "the preview's caption is in the top third");
    await shot(page, 'caption-away-from-face');

    // The studio asks for no position; the coordinator gives the render the same band.
    const request = page.waitForRequest((r) => r.url().endsWith('/api/render') && r.method() === 'POST');
    const response = page.waitForResponse((r) => r.url().endsWith('/api/render') && r.request().method() === 'POST');
    await page.click('button.primary:has-text("Render")');
    const body = JSON.parse((await request).postData()!);
    t.false((body.options.style as Array<{ property: string }>).some((i) => i.property === 'position'));
    const { renderId } = await (await response).json();
    const task = await cluster.app.db.one<{ payload: { options: { style: unknown[] } } }>(
      `SELECT payload FROM tasks WHERE subject_id = $1`,
      [renderId],
    );
    t.deepEqual(task!.payload.options.style.at(-1), { property: 'position', value: 'top' });

    // Another preset sets other lines: the preview asks the coordinator again and shows the band that
    // preset's render will take, and the render asked next carries exactly the style items shown.
    const answered = page.waitForResponse(
      (r) => r.url().includes('/api/render/caption-position') && (r.request().postData() ?? '').includes('HORMOZI'),
    );
    await page.selectOption('#render-style', 'style:HORMOZI');
    const answer = (await (await answered).json()) as { position: 'top' | 'center' | 'bottom'; movedFromFace?: boolean; style: unknown[] };
    const words = { top: 'top', center: 'middle', bottom: 'lower third' }[answer.position];
    const label = `Automatic: ${words}${answer.movedFromFace ? ', away from the face' : ''}`;
    await waitFor(async () => (await page.locator('#caption-position option:checked').innerText()) === label || undefined, 10_000, label);
    const hormozi = await box(page, '[data-testid="preview-caption"]');
    const frameNow = await box(page, '[data-testid="caption-preview"]');
    const third = { top: 0, center: 1, bottom: 2 }[answer.position];
    t.is(
      Math.floor(((hormozi.y + hormozi.height / 2 - frameNow.y) / frameNow.height) * 3),
      third,
      `the preview's caption is where the answer says`,
    );
    // The first render is still queued (no agent here): cancelled, it frees the Render button.
    t.is((await cluster.api('POST', `/api/render/${renderId}/cancel`, { key, body: {} })).status, 202);
    await page.locator('button.primary:has-text("Render"):enabled').waitFor({ timeout: 15_000 });
    const second = page.waitForResponse((r) => r.url().endsWith('/api/render') && r.request().method() === 'POST');
    await page.click('button.primary:has-text("Render")');
    const secondTask = await cluster.app.db.one<{ payload: { captionPreset: string; options: { style: unknown[] } } }>(
      `SELECT payload FROM tasks WHERE subject_id = $1`,
      [((await (await second).json()) as { renderId: string }).renderId],
    );
    t.is(secondTask!.payload.captionPreset, 'HORMOZI');
    t.deepEqual(secondTask!.payload.options.style, answer.style);
    // The browser remembers a chosen style for every job page: back to the brand preset, so the
    // tests after this one open on it as a new user would.
    const brandOption = await page.locator('#render-style option[value^="brand:"]').first().getAttribute('value');
    await page.selectOption('#render-style', brandOption!);
    // A short with no framed face low keeps the render as it was: no position added.
    const plain = await insertCompletedJob(cluster.app, {
      organizationId: (await cluster.app.db.one<{ o: string }>(`SELECT organization_id AS o FROM jobs WHERE id = $1`, [jobId]))!.o,
      words: WORDS,
      shorts: [{ startTime: SHORT_START, endTime: 5 }],
    });
    const created = await cluster.api('POST', '/api/render', { key, body: { id: plain, target: 0, preset: 'DEFAULT' } });
    t.is(created.status, 201);
    const plainTask = await cluster.app.db.one<{ payload: { options: Record<string, unknown> } }>(
      `SELECT payload FROM tasks WHERE subject_id = $1`,
      [created.body.renderId],
    );
    t.is(plainTask!.payload.options.style, undefined);
    t.deepEqual(pageErrors, []);
    await page.close();
  },
);

needing({ tools: TOOLS }).serial(
  "the layout badge sits outside the frame: it never covers a watermark at the preset's (40, 40)",
  async (t) => {
    const { page, pageErrors } = await signedInJobPage('badge@studio.test', 'pro', undefined, lowFaceShort());
    await page.waitForSelector('[data-testid="watermark-fields"]', { timeout: 15_000 });
    const badge = await box(page, '[data-testid="preview-layout-label"]');
    const wm = await box(page, '[data-testid="preview-watermark"]');
    const frame = await box(page, '[data-testid="caption-preview"]');
    const overlap =
      Math.max(0, Math.min(badge.x + badge.width, wm.x + wm.width) - Math.max(badge.x, wm.x)) *
      Math.max(0, Math.min(badge.y + badge.height, wm.y + wm.height) - Math.max(badge.y, wm.y));
    t.is(overlap, 0, `badge ${JSON.stringify(badge)} over watermark ${JSON.stringify(wm)}`);
    t.true(badge.y + badge.height <= frame.y + 0.5, 'the badge is above the frame, not on it');
    // Nothing else is drawn over the logo: the topmost element at its centre is the watermark.
    const onTop = await page.evaluate(
      ([x, y]) => document.elementFromPoint(x!, y!)?.closest('[data-testid="preview-watermark"]') !== null,
      [wm.x + wm.width / 2, wm.y + wm.height / 2],
    );
    t.true(onTop, 'the watermark is on top at its centre');
    t.deepEqual(pageErrors, []);
    await page.close();
  },
);
