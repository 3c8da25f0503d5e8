import { waitFor } from './helpers/cluster.js';
import { screenshotter, type Page } from './helpers/browser.js';
import { needing } from './helpers/requirements.js';
import type { RenderList } from '@shorts/common/api/renders';
import { CHROMIUM_TOOL, helloThereJobPage, studioCluster, studioUser } from './helpers/studio.js';

// The render panel's size control: it offers the plan's sizes (1080x1920 first where the plan allows
// it, 720x1280 only on free and starter), the preview takes the chosen shape, the render is made at
// that size (the API's own default, with no size sent, is 720x1280), and the size is remembered per
// brand preset; the chosen preset survives a reload.

const studio = studioCluster('studio_sizes');
const TOOLS = CHROMIUM_TOOL;

async function jobPage(email: string, plan: string): Promise<{ page: Page; jobId: string; key: string; pageErrors: string[] }> {
  const { cluster, chromium } = studio;
  const { org, key } = await cluster.org({ plan, credits: 10, name: `Org ${email}` });
  await studioUser(cluster, org.id, email);
  for (const [name, isDefault] of [
    ['Channel look', true],
    ['Second look', false],
  ] as const) {
    const res = await cluster.api('POST', '/api/organizations/brandings', { key, body: { name, preset: 'DEFAULT', isDefault } });
    if (res.status >= 300) throw new Error(JSON.stringify(res.body));
  }
  return { ...(await helloThereJobPage(cluster, chromium, org.id, email)), key };
}

/** The size control's value once it reads `want` (it follows a preset change a moment later), else what it reads. */
async function sizeShown(page: Page, want: string): Promise<string> {
  const deadline = Date.now() + 5000;
  let value = await page.inputValue('#render-size');
  while (value !== want && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    value = await page.inputValue('#render-size');
  }
  return value;
}

const options = (page: Page) => page.$$eval('#render-size option', (os) => os.map((o) => (o as HTMLOptionElement).value));
const previewShape = async (page: Page) => {
  const b = (await page.locator('[data-testid="caption-preview"]').boundingBox())!;
  return { frame: await page.getAttribute('[data-testid="caption-preview"]', 'data-frame'), ratio: b.width / b.height };
};

/** Clicks Render and answers the size the render was made at, as the API lists it. */
async function renderAndReadSize(page: Page, jobId: string, key: string): Promise<string> {
  const response = page.waitForResponse((r) => r.url().endsWith('/api/render') && r.request().method() === 'POST');
  await page.click('button.primary:has-text("Render")');
  const created = await (await response).json();
  const list = (await studio.cluster.api('GET', `/api/jobs/${jobId}/renders`, { key })).body as RenderList;
  const render = list.data.find((r) => r.renderId === created.renderId);
  if (!render) throw new Error(`render ${created.renderId} not listed`);
  return `${render.output.width}x${render.output.height}`;
}

// Serial: the tests sign in as different users in one browser profile, which shares the cookie.
needing({ tools: TOOLS }).serial(
  'the highest plan offers its sizes, 1080x1920 first; the render and the preview take the chosen size, remembered per preset',
  async (t) => {
    const { page, jobId, key, pageErrors } = await jobPage('sizes-business@studio.test', 'business');
    const shot = await screenshotter('studio-render-sizes');
    await page.waitForSelector('#render-size');
    t.deepEqual(await options(page), ['1080x1920', '720x1280', '2160x3840', '1080x1080', '1920x1080', '3840x2160']);
    // The default is picked once the plan's sizes and the preset are both in (on a busy machine after
    // the options show): wait for it to settle rather than read it mid-render.
    await page
      .waitForFunction(() => (document.querySelector('#render-size') as HTMLSelectElement | null)?.value === '1080x1920', undefined, {
        timeout: 10_000,
      })
      .catch(() => undefined);
    t.is(await page.inputValue('#render-size'), '1080x1920', 'portrait 1080x1920 by default');
    t.is(await renderAndReadSize(page, jobId, key), '1080x1920', 'a render with the defaults is 1080x1920, not the API default');

    // Landscape: the preview turns (the Render button waits for the first render: renders are checked after a reload).
    await page.selectOption('#render-size', '1920x1080');
    const wide = await previewShape(page);
    t.is(wide.frame, '1920x1080');
    t.true(Math.abs(wide.ratio - 16 / 9) < 0.02, `preview ratio ${wide.ratio}`);
    await shot(page, 'landscape');

    // Per preset: the second one starts at the default; square chosen for it.
    await page.selectOption('#render-style', { label: 'Second look' });
    t.is(await sizeShown(page, '1080x1920'), '1080x1920');
    await page.selectOption('#render-size', '1080x1080');
    t.true(Math.abs((await previewShape(page)).ratio - 1) < 0.02, 'a square preview');

    // After a reload: the chosen preset is still chosen, with its size, and renders at it; the first keeps landscape.
    await page.reload();
    await page.waitForSelector('#render-size');
    await waitFor(
      async () => ((await page.inputValue('#render-style')).startsWith('brand:') ? true : undefined),
      15_000,
      'a preset chosen',
    );
    t.is(await page.locator('#render-style option:checked').textContent(), 'Second look', 'the chosen preset survives a reload');
    t.is(await sizeShown(page, '1080x1080'), '1080x1080');
    t.is(await renderAndReadSize(page, jobId, key), '1080x1080');
    await page.selectOption('#render-style', { label: 'Channel look (default)' });
    t.is(await sizeShown(page, '1920x1080'), '1920x1080', 'each preset keeps its own size');
    t.deepEqual(pageErrors, []);
    await page.close();
  },
);

needing({ tools: TOOLS }).serial('free and starter plans are offered 720x1280 only, and render at it', async (t) => {
  for (const plan of ['free', 'starter']) {
    const { page, jobId, key, pageErrors } = await jobPage(`sizes-${plan}@studio.test`, plan);
    await page.waitForSelector('#render-size');
    t.deepEqual(await options(page), ['720x1280'], plan);
    t.is((await previewShape(page)).frame, '720x1280');
    t.is(await renderAndReadSize(page, jobId, key), '720x1280', plan);
    t.deepEqual(pageErrors, []);
    await page.close();
  }
});
