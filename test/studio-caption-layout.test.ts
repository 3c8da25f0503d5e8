import test from 'ava';
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { launchChromium, screenshotter, type Page } from './helpers/browser.js';
import { FFMPEG } from './helpers/media.js';
import { needing } from './helpers/requirements.js';
import { buildStudio, CHROMIUM_TOOL, signInToJobPage, studioUser } from './helpers/studio.js';
import { CAPTION_PRESETS, resolveCaptionStyle } from '@shorts/common/render/presets';
import { fontSizes } from '@shorts/common/render/caption-layout';
import { captionFontFile, styleFontMetrics } from '@shorts/common/render/caption-font-files';
import { captionFace, captionFontUrl } from '@shorts/common/render/caption-fonts';

// What you see is what you get, for captions: for every caption preset and three output sizes, the
// studio's live preview at a moment and the render's frame at that moment show the caption in the
// same place at the same size (the ink's box, measured from pixels on both sides, within 2 % of the
// frame), with the same words on each line (the preview's from the shared layout it drew, the
// render's from the ASS script it burned in).

const run = promisify(execFile);
let cluster: TestCluster;
let chromium: Awaited<ReturnType<typeof launchChromium>>;
let source: string;
const BG = { r: 0x30, g: 0x30, b: 0x30 };
// Long enough words that the big presets need two lines in portrait, one in landscape.
const WORDS = ['the', 'quickest', 'brownest', 'foxes', 'jumped', 'over', 'lazy', 'dogs'].map((text, i) => ({
  text,
  start: 0.2 + i * 0.5,
  end: 0.2 + i * 0.5 + 0.45,
}));
const AT = 1.55; // "brownest" spoken since 1.2 s: its pop has settled in every preset
const SIZES = [
  { width: 1080, height: 1920 },
  { width: 720, height: 1280 },
  { width: 1920, height: 1080 },
];

test.serial.before(async () => {
  if (!Object.values(CHROMIUM_TOOL).every(Boolean)) return;
  buildStudio();
  cluster = await startCluster('studio_caption_layout', { renderActiveLimit: 40 });
  // A flat dark grey picture: every pixel that is not that grey is caption.
  source = path.join(cluster.dataDir, 'flat.mp4');
  await run(FFMPEG, [
    ...[
      '-y',
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      `color=c=0x303030:s=1280x720:r=25:d=3`,
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=300:duration=3',
    ],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', source],
  ]);
  await cluster.startAgent();
  chromium = await launchChromium();
});
test.after.always(async () => {
  await chromium?.close();
  await cluster?.close();
});

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The box of the pixels that differ from the background grey by more than a fifth of full scale. */
function inkBox(rgb: Buffer, width: number, height: number, channels: number): Box | null {
  let x0 = width;
  let y0 = height;
  let x1 = -1;
  let y1 = -1;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = (y * width + x) * channels;
      const d = Math.max(Math.abs(rgb[p]! - BG.r), Math.abs(rgb[p + 1]! - BG.g), Math.abs(rgb[p + 2]! - BG.b));
      if (d <= 50) continue;
      x0 = Math.min(x0, x);
      x1 = Math.max(x1, x);
      y0 = Math.min(y0, y);
      y1 = Math.max(y1, y);
    }
  }
  return x1 < 0 ? null : { x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 };
}

/** The preview's caption canvas (output pixels), laid over the same grey the render's source has. */
async function previewInk(page: Page, size: { width: number; height: number }): Promise<Box | null> {
  const url = await page.evaluate(() =>
    (document.querySelector('[data-testid="preview-caption-canvas"]') as HTMLCanvasElement).toDataURL('image/png'),
  );
  const { data, info } = await sharp(Buffer.from(url.split(',')[1]!, 'base64'))
    .flatten({ background: BG })
    .raw()
    .toBuffer({ resolveWithObject: true });
  if (info.width !== size.width || info.height !== size.height) throw new Error(`caption canvas ${info.width}x${info.height}`);
  return inkBox(data, info.width, info.height, info.channels);
}

async function renderInk(file: string, size: { width: number; height: number }): Promise<Box | null> {
  const { stdout } = await run(
    FFMPEG,
    ['-v', 'error', '-ss', String(AT), '-i', file, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'],
    {
      encoding: 'buffer',
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  return inkBox(stdout, size.width, size.height, 3);
}

/** The words of each line of the script's event on screen at AT (libass breaks only at \N). */
function scriptLines(ass: string): string[][] {
  const cs = (s: string) => {
    const [h, m, sec] = s.split(':');
    return Number(h) * 3600 + Number(m) * 60 + Number(sec);
  };
  for (const line of ass.split('\n')) {
    const m = /^Dialogue: 1,([^,]+),([^,]+),Caption,[^,]*,\d+,\d+,\d+,[^,]*,(.*)$/.exec(line);
    if (!m || cs(m[1]!) > AT || cs(m[2]!) <= AT) continue;
    return m[3]!
      .replace(/\{[^}]*\}/g, '')
      .split('\\N')
      .map((l) => l.trim().split(/\s+/));
  }
  throw new Error('no caption event at the moment compared');
}

let page: Page;
let pageErrors: string[];
let key: string;
const renders = new Map<string, string>();
const sizeName = (size: { width: number; height: number }) => `${size.width}x${size.height}`;

test.serial.before(async () => {
  if (!cluster) return;
  const made = await cluster.org({ plan: 'business', credits: 100 });
  key = made.key;
  await studioUser(cluster, made.org.id, 'layout@studio.test');
  const jobId = await insertCompletedJob(cluster.app, {
    organizationId: made.org.id,
    sourcePath: source,
    words: WORDS,
    width: 1280,
    height: 720,
    shorts: [{ startTime: 0, endTime: 2.4, title: 'Foxes' }],
  });
  // Every render asked at once; the agent works through them while the previews are read.
  for (const size of SIZES) {
    for (const preset of CAPTION_PRESETS) {
      const res = await cluster.api('POST', '/api/render', { key, body: { id: jobId, target: 0, preset, size } });
      if (res.status !== 201) throw new Error(JSON.stringify(res.body));
      renders.set(`${preset} ${sizeName(size)}`, res.body.renderId);
    }
  }
  ({ page, pageErrors } = await signInToJobPage(chromium, cluster.app.httpUrl, 'layout@studio.test', jobId, {
    ready: '[data-testid="caption-preview"]',
    viewport: { width: 1366, height: 1400 },
  }));
  // The player at AT: "brownest" spoken.
  await page.evaluate((at) => {
    const v = document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement;
    v.pause();
    v.currentTime = at;
  }, AT);
});

const lineCounts: number[] = [];

// One test a size: the renders come in the order they were asked, so each waits for its own seven.
for (const size of SIZES) {
  needing({ tools: CHROMIUM_TOOL }).serial(
    `at ${sizeName(size)}, for every caption preset the preview draws the caption where, as big as, and with the lines the render burns in`,
    async (t) => {
      const shot = await screenshotter('studio-caption-layout');
      const previews = new Map<string, { ink: Box | null; lines: string[][] }>();
      for (const preset of CAPTION_PRESETS) {
        const name = `${preset} ${sizeName(size)}`;
        await page.selectOption('#render-style', `style:${preset}`);
        await page.selectOption('#render-size', sizeName(size));
        const box = page.locator('[data-testid="preview-caption"]');
        const style = resolveCaptionStyle(preset, null);
        const fontSizePx = fontSizes(style, size, styleFontMetrics(style)).fontSizePx;
        await waitFor(
          async () =>
            (await box.count()) === 1 &&
            (await box.getAttribute('data-active')) === '2' &&
            (await box.getAttribute('data-frame')) === sizeName(size) &&
            Number(await box.getAttribute('data-font-size')) === fontSizePx
              ? true
              : undefined,
          15_000,
          `the preview of ${name}`,
        );
        // The canvas is drawn in the effect after the box shows.
        await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
        previews.set(name, { ink: await previewInk(page, size), lines: JSON.parse((await box.getAttribute('data-lines'))!) });
        if (size.width === 1080 && size.height === 1920) await shot(page, `preview-${preset.toLowerCase()}`);
      }
      t.deepEqual(pageErrors, []);

      for (const preset of CAPTION_PRESETS) {
        const name = `${preset} ${sizeName(size)}`;
        const done = await waitFor(
          async () => {
            const r = await cluster.api('GET', `/api/render/${renders.get(name)}`, { key });
            return r.body.type === 'done' || r.body.type === 'error' ? r.body : undefined;
          },
          280_000,
          `render ${name}`,
        );
        t.is(done.type, 'done', JSON.stringify(done));
        const file = path.join(cluster.dataDir, `${renders.get(name)}.mp4`);
        await writeFile(file, Buffer.from(await (await fetch(done.url)).arrayBuffer()));
        const ass = await (await fetch(done.captionsUrl)).text();
        const rendered = await renderInk(file, size);
        const preview = previews.get(name)!;
        lineCounts.push(preview.lines.length);
        t.deepEqual(preview.lines, scriptLines(ass), `${name}: the same words on each line`);
        t.truthy(rendered && preview.ink, `${name}: a caption on both (${JSON.stringify({ rendered, preview: preview.ink })})`);
        if (!rendered || !preview.ink) continue;
        const off = {
          x: Math.abs(rendered.x - preview.ink.x) / size.width,
          y: Math.abs(rendered.y - preview.ink.y) / size.height,
          width: Math.abs(rendered.width - preview.ink.width) / size.width,
          height: Math.abs(rendered.height - preview.ink.height) / size.height,
        };
        t.log(`${name}: lines ${JSON.stringify(preview.lines)} render ${JSON.stringify(rendered)} preview ${JSON.stringify(preview.ink)}`);
        for (const [k, v] of Object.entries(off)) t.true(v <= 0.02, `${name}: ${k} differs by ${(v * 100).toFixed(2)} % of the frame`);
      }
    },
  );
}

needing({ tools: CHROMIUM_TOOL }).serial('the comparison covered pages broken in two lines as well as one', (t) => {
  t.true(lineCounts.includes(1) && lineCounts.some((n) => n > 1), `lines per page: ${lineCounts.join(', ')}`);
});

needing({ tools: CHROMIUM_TOOL }).serial('a render started from the studio says where its captions went, as its status does', async (t) => {
  const [lastSize] = SIZES.slice(-1);
  await page.selectOption('#render-style', 'style:HORMOZI');
  await page.selectOption('#render-size', sizeName(lastSize!));
  const created = page.waitForResponse((r) => r.url().endsWith('/api/render') && r.request().method() === 'POST');
  await page.click('button.primary:has-text("Render")');
  const { renderId } = await (await created).json();
  const note = page.locator('[data-testid="render-caption-position"]');
  await note.waitFor({ timeout: 60_000 });
  const status = (await cluster.api('GET', `/api/render/${renderId}`, { key })).body;
  t.deepEqual(status.captionPosition, { position: 'center', chosenBy: 'automatic' }, 'no faces: the style’s own middle');
  t.is(await note.getAttribute('data-position'), 'center');
  t.regex((await note.textContent())!, /Captions: middle \(automatic: the style’s own place, no framed faces known\)/);
});

needing({ tools: CHROMIUM_TOOL }).serial(
  'the studio is served the very font files the renderer draws with, and no other file by that route',
  async (t) => {
    const face = captionFace('Montserrat', 900);
    const res = await fetch(`${cluster.app.httpUrl}${captionFontUrl(face)}`);
    t.is(res.status, 200);
    t.is(res.headers.get('content-type'), 'font/ttf');
    t.true(Buffer.from(await res.arrayBuffer()).equals(await readFile(captionFontFile(face))));
    for (const other of ['Montserrat_950Heavy.ttf', '..%2F..%2Fpackage.json', 'package.json']) {
      const r = await fetch(`${cluster.app.httpUrl}/studio/fonts/${other}`);
      t.not(r.headers.get('content-type'), 'font/ttf', other);
    }
  },
);
