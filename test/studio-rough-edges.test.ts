import sharp from 'sharp';
import { waitFor } from './helpers/cluster.js';
import { needing } from './helpers/requirements.js';
import { insertFiles } from '../coordinator/src/files/files.js';
import { CHROMIUM_TOOL, helloThereJobPage, studioCluster, studioUser } from './helpers/studio.js';

// Rough edges of the studio: a 0-byte upload is refused with "The file is empty"; an uploaded logo is
// listed by its file name with a thumbnail; a render's progress reads the same in the render panel and
// in the render list, and the list says done when it ends. (A chosen preset surviving a reload:
// studio-render-sizes.test.ts.)

const studio = studioCluster('studio_rough');
const TOOLS = CHROMIUM_TOOL;

needing({ tools: TOOLS }).serial('rough edges: an empty file, the logo by its name, progress that agrees and ends done', async (t) => {
  const { cluster, chromium } = studio;
  const { org, key } = await cluster.org({ plan: 'business', credits: 10 });
  await studioUser(cluster, org.id, 'rough@studio.test');
  const logoKey = `orgs/${org.id}/channel-logo.png`;
  const { size } = await cluster.app.store.put(
    logoKey,
    await sharp({ create: { width: 64, height: 32, channels: 4, background: { r: 0, g: 0, b: 255, alpha: 1 } } })
      .png()
      .toBuffer(),
  );
  const [logoId] = await cluster.app.db.tx((c) =>
    insertFiles(c, [{ organizationId: org.id, name: 'channel-logo.png', type: 'image', sizeBytes: size, objectKey: logoKey }]),
  );
  const preset = await cluster.api('POST', '/api/organizations/brandings', {
    key,
    body: {
      name: 'Channel look',
      preset: 'DEFAULT',
      options: { waterMark: { fileAppId: logoId, left: '40px', top: '40px', width: '200px' } },
    },
  });
  t.is(preset.status, 200, JSON.stringify(preset.body));
  const { page, pageErrors, jobId } = await helloThereJobPage(cluster, chromium, org.id, 'rough@studio.test');
  const base = cluster.app.httpUrl;

  // Progress: the panel's and the list's numbers read at the same moment agree, as the agent moves it.
  const response = page.waitForResponse((r) => r.url().endsWith('/api/render') && r.request().method() === 'POST');
  await page.click('button.primary:has-text("Render")');
  const { renderId } = (await (await response).json()) as { renderId: string };
  const item = `[data-testid="short-render"][data-render-id="${renderId}"]`;
  await page.waitForSelector(item);
  const samples: Array<[string | null, string | null]> = [];
  for (let p = 0.05; p < 0.96; p += 0.1) {
    await cluster.app.db.query(`UPDATE renders SET status = 'progress', progress = $2 WHERE id = $1`, [renderId, p]);
    for (let k = 0; k < 4; k++) {
      await new Promise((r) => setTimeout(r, 200));
      samples.push(
        await page.evaluate(
          (sel) =>
            [document.querySelector('[data-testid="render-status"]'), document.querySelector(sel)].map(
              (el) => el?.textContent?.match(/Rendering: (\d+)%/)?.[1] ?? null,
            ) as [string | null, string | null],
          item,
        ),
      );
    }
  }
  const shown = samples.filter(([a, b]) => a !== null || b !== null);
  t.true(shown.length > 10, `progress shown (${JSON.stringify(samples)})`);
  t.deepEqual(
    shown.filter(([a, b]) => a !== b),
    [],
    'the panel and the list show the same percentage at every moment',
  );

  // It ends: the list says done (not its last percentage).
  const fileKey = `orgs/${org.id}/renders/${renderId}.mp4`;
  const stored = await cluster.app.store.put(fileKey, Buffer.from('not really an mp4'));
  const [fileId] = await cluster.app.db.tx((c) =>
    insertFiles(c, [
      { organizationId: org.id, jobId, name: 'r.mp4', type: 'video', sizeBytes: stored.size, objectKey: fileKey, lengthSec: 3 },
    ]),
  );
  await cluster.app.db.query(`UPDATE renders SET status = 'done', progress = 1, file_id = $2, size_bytes = $3 WHERE id = $1`, [
    renderId,
    fileId,
    stored.size,
  ]);
  await page.waitForSelector('[data-testid="render-status"] >> text=Rendered', { timeout: 10_000 });
  await page.waitForSelector(`${item}[data-state="done"]`, { timeout: 3_000 });
  t.notRegex((await page.locator(item).textContent())!, /Rendering: \d+%/);

  // The brand preset's logo: its file name and a thumbnail, not its id.
  await page.goto(`${base}/studio/#/presets`);
  await page.click('button[aria-label="Edit Channel look"]');
  const logo = page.locator('[data-testid="watermark-file"]');
  await logo.locator('strong').waitFor();
  t.regex((await logo.textContent())!, /channel-logo\.png/);
  t.notRegex((await logo.textContent())!, new RegExp(logoId!));
  await waitFor(
    async () =>
      (await page.evaluate(
        () => (document.querySelector('[data-testid="watermark-thumb"]') as HTMLImageElement | null)?.naturalWidth ?? 0,
      )) > 0
        ? true
        : undefined,
    10_000,
    'the thumbnail loaded',
  );

  // A 0-byte file: refused with a clear message, and no upload starts.
  await page.goto(`${base}/studio/#/jobs`);
  let uploads = 0;
  page.on('request', (r) => {
    if (r.url().includes('/api/uploads/tus')) uploads++;
  });
  await page.setInputFiles('#upload-file', { name: 'empty.mp4', mimeType: 'video/mp4', buffer: Buffer.alloc(0) });
  await page.click('button.primary:has-text("Upload")');
  const alert = page.locator('[role="alert"]', { hasText: 'The file is empty' });
  await alert.waitFor({ timeout: 5_000 });
  t.regex((await alert.textContent())!, /The file is empty/);
  t.is(uploads, 0);
  t.deepEqual(pageErrors, []);
  await page.close();
});
