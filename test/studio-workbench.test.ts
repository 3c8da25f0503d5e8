import test from 'ava';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { FakeAgent } from './helpers/fake-agent.js';
import { CHROMIUM_PATH, launchChromium, screenshotter, type Page } from './helpers/browser.js';
import { needing } from './helpers/requirements.js';
import { repoRoot } from '@shorts/common/paths';
import { createUser } from '../coordinator/src/tenancy/tenancy.js';
import { setPassword } from '../coordinator/src/tenancy/sessions.js';
import type { Parsed } from './helpers/parsed.js';

// Issue 25 items 1 and 7 in a real browser (Debian's chromium through playwright-core) against a
// real coordinator and Postgres, at a desktop and a phone width: a job from a link (and a refused
// link, in the API's words), a file dropped on the drop zone, a failed job's reason with Retry and
// Delete, Settings → API keys (a key shown once, then revoked), /docs served offline with a
// try-it-out that answers for real with that key, and the favicon. No real agent runs: a fake agent
// speaking the real protocol takes the analysis and fails it the way a failed download does.
// Screens go to test/.out/workbench/.

const sh = promisify(execFile);
const TOOLS = { [`chromium (${CHROMIUM_PATH})`]: existsSync(CHROMIUM_PATH), ffmpeg: spawnSync('ffmpeg', ['-version']).status === 0 };
const haveTools = Object.values(TOOLS).every(Boolean);
// Fails in CI (which installs them), skips elsewhere saying what is missing: see needing().
const serial = needing({ tools: TOOLS }).serial;

let cluster: TestCluster;
let chromium: Awaited<ReturnType<typeof launchChromium>>;
let shot: Awaited<ReturnType<typeof screenshotter>>;
let media: http.Server;
let mediaUrl: string;
let videoPath: string;
let agent: FakeAgent;
const served: string[] = [];

test.before(async () => {
  if (!haveTools) return;
  const build = spawnSync(process.execPath, [path.join(repoRoot(), 'scripts/build-studio.mjs')], { stdio: 'inherit' });
  if (build.status !== 0) throw new Error('the studio build failed');
  cluster = await startCluster('studio_workbench');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'workbench-media-'));
  videoPath = path.join(dir, 'dropped-talk.mp4');
  await sh('ffmpeg', [
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=320x240:rate=25',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440',
    '-t',
    '2',
    '-c:v',
    'libx264',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-shortest',
    videoPath,
  ]);
  const bytes = await readFile(videoPath);
  // The "file URL" a creator pastes: a plain web server on this host (the test config allows 127.0.0.1).
  media = http.createServer((req, res) => {
    served.push(req.url ?? '');
    if (req.url === '/talk.mp4') res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': bytes.length }).end(bytes);
    else res.writeHead(404).end('not found');
  });
  await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
  mediaUrl = `http://127.0.0.1:${(media.address() as AddressInfo).port}`;
  agent = await new FakeAgent(cluster.app.grpcAddress, undefined, 'workbench-fake').register(['analyze-video']);
  chromium = await launchChromium();
  shot = await screenshotter('workbench');
});

test.after.always(async () => {
  agent?.close();
  await chromium?.close();
  await new Promise((resolve) => (media ? media.close(resolve) : resolve(undefined)));
  await cluster?.close();
});

/** Takes the queued analysis of `jobId` and returns its payload. */
async function leaseAnalysis(jobId: string): Promise<{ task_id: string; lease_token: string; payload: Parsed }> {
  return waitFor(
    async () => {
      const task = await agent.lease(500);
      if (!task) return undefined;
      const payload = JSON.parse(task.payload_json);
      if (payload.jobId !== jobId) {
        // An earlier job's expired lease offered again: end it so it is not offered once more.
        await agent.fail(task.task_id, task.lease_token, 'left by an earlier step', false);
        return undefined;
      }
      return { task_id: task.task_id, lease_token: task.lease_token, payload };
    },
    15_000,
    `the analysis of ${jobId}`,
  );
}

async function rowOf(page: Page, jobId: string) {
  const row = page.locator(`tr[data-job-id="${jobId}"]`);
  await row.waitFor();
  return row;
}

const VIEWPORTS = [
  { name: 'desktop', width: 1366, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];

for (const vp of VIEWPORTS) {
  serial(
    `${vp.name} (${vp.width}x${vp.height}): new job from a link and from a dropped file, a failed job's reason, Retry, Delete`,
    async (t) => {
      const { org, key } = await cluster.org({ plan: 'pro', credits: 100, name: `Workbench ${vp.name}` });
      const email = `${vp.name}@workbench.test`;
      const user = await createUser(cluster.app.db, { email, organizationId: org.id, role: 'owner' });
      await setPassword(cluster.app.db, user.id, 'a long workbench password');
      // One browser profile for all tests: each signs in afresh as its own organization's owner.
      await chromium.browser.clearCookies();
      const page = await chromium.browser.newPage();
      await page.setViewportSize({ width: vp.width, height: vp.height });
      const missing: string[] = [];
      const errors: string[] = [];
      page.on('response', (r) => {
        if (r.status() === 404) missing.push(r.url());
      });
      page.on('pageerror', (err) => errors.push(err.message));
      page.on('dialog', (d) => void d.accept());
      const base = cluster.app.httpUrl;

      await page.goto(`${base}/studio/`);
      await page.fill('#email', email);
      await page.fill('#password', 'a long workbench password');
      await page.press('#password', 'Enter');
      await page.waitForSelector('h1 >> text=Jobs');
      t.is(await page.locator('h2', { hasText: 'New job' }).count(), 1, 'one New job entry');
      t.true(await page.locator('[data-testid="drop-zone"]').isVisible(), 'the drop zone is on the same screen');

      // A link the SSRF rules refuse: the API's own 4xx words are shown, and no job is made.
      const refusedLink = 'http://10.1.2.3/internal.mp4';
      const expected = await cluster.api('POST', '/api/jobs', { key, body: { functionName: 'VideoShorts', fileUrl: refusedLink } });
      t.true(expected.status >= 400 && expected.status < 500);
      await page.fill('#new-job-link', refusedLink);
      await page.click('button:has-text("Start job")');
      await page.waitForSelector('.new-job .error');
      t.is((await page.locator('.new-job .error').innerText()).trim(), expected.body.message);
      await shot(page, `${vp.name}-01-link-refused`);
      t.is((await cluster.api('GET', '/api/jobs', { key })).body.total, 0);

      // A link to a file that is not there: the job starts, its analysis fails as a failed download does.
      await page.fill('#new-job-link', `${mediaUrl}/missing.mp4`);
      await page.fill('#upload-title-input', 'Missing talk');
      await page.click('button:has-text("Start job")');
      await page.waitForSelector('.notice >> text=Job started.');
      const failedId = (await cluster.api('GET', '/api/jobs', { key })).body.data[0].id as string;
      const lease = await leaseAnalysis(failedId);
      t.deepEqual(lease.payload.source, { kind: 'url', url: `${mediaUrl}/missing.mp4` });
      await agent.fail(lease.task_id, lease.lease_token, 'Download failed: the server answered 404 Not Found', false);
      const reason = await waitFor(
        async () => {
          const item = (await cluster.api('GET', '/api/jobs', { key })).body.data.find((j: { id: string }) => j.id === failedId);
          return item?.status === 'FAILED' ? (item.message as string) : undefined;
        },
        15_000,
        'the job to fail',
      );
      t.truthy(reason);
      const failedRow = await rowOf(page, failedId);
      await failedRow.locator('[data-testid="fail-reason"]').waitFor();
      t.is((await failedRow.locator('[data-testid="fail-reason"]').innerText()).trim(), reason);
      t.is(await failedRow.locator('td[data-label="Status"] .status').innerText(), 'FAILED');
      await failedRow.scrollIntoViewIfNeeded();
      await shot(page, `${vp.name}-02-failed-reason`);

      // Retry: a new job from the same link and title, nothing uploaded again.
      await failedRow.locator('button:has-text("Retry")').click();
      const retriedId = await waitFor(
        async () => {
          const list = (await cluster.api('GET', '/api/jobs', { key })).body.data as Array<{ id: string; title: string; status: string }>;
          return list.find((j) => j.id !== failedId && j.title === 'Missing talk' && j.status === 'PROCESSING')?.id;
        },
        10_000,
        'the retried job',
      );
      const retriedRow = await rowOf(page, retriedId);
      t.is(await retriedRow.locator('td[data-label="Title"]').innerText(), 'Missing talk');
      t.deepEqual((await leaseAnalysis(retriedId)).payload.source, { kind: 'url', url: `${mediaUrl}/missing.mp4` });
      // A running job offers neither Retry nor Delete.
      t.is(await retriedRow.locator('button').count(), 0);

      // Delete the failed one: it leaves the list and the API.
      await failedRow.locator('button:has-text("Delete")').click();
      await page.locator(`tr[data-job-id="${failedId}"]`).waitFor({ state: 'detached' });
      t.is((await cluster.api('GET', `/api/jobs/${failedId}`, { key })).status, 404);
      await shot(page, `${vp.name}-03-retried-and-deleted`);

      // A link to a served file starts a job from that URL.
      await page.fill('#new-job-link', `${mediaUrl}/talk.mp4`);
      await page.fill('#upload-title-input', 'Served talk');
      await page.click('button:has-text("Start job")');
      await page.waitForSelector('.notice >> text=Job started.');
      const servedJob = (await cluster.api('GET', '/api/jobs', { key })).body.data.find(
        (j: { title: string }) => j.title === 'Served talk',
      );
      t.like(servedJob, { status: 'PROCESSING', source: 'WEB_APP' });
      await rowOf(page, servedJob.id);
      t.deepEqual((await leaseAnalysis(servedJob.id)).payload.source, { kind: 'url', url: `${mediaUrl}/talk.mp4` });

      // A file dropped on the drop zone goes up through the resumable upload and becomes a job.
      const bytes = (await readFile(videoPath)).toString('base64');
      const dataTransfer = await page.evaluateHandle((b64) => {
        const raw = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
        const dt = new DataTransfer();
        dt.items.add(new File([raw], 'dropped-talk.mp4', { type: 'video/mp4' }));
        return dt;
      }, bytes);
      await page.dispatchEvent('[data-testid="drop-zone"]', 'dragenter', { dataTransfer });
      await page.dispatchEvent('[data-testid="drop-zone"]', 'drop', { dataTransfer });
      await page.waitForSelector('.notice >> text=Uploaded.', { timeout: 30_000 });
      const dropped = (await cluster.api('GET', '/api/jobs', { key })).body.data.find(
        (j: { title: string }) => j.title === 'dropped-talk.mp4',
      );
      t.like(dropped, { source: 'WEB_APP' });
      const droppedRow = await rowOf(page, dropped.id);
      t.is(await droppedRow.locator('td[data-label="Source"]').innerText(), 'Studio');
      t.like((await leaseAnalysis(dropped.id)).payload.source, { kind: 'object' });
      await shot(page, `${vp.name}-04-dropped-file`);

      t.deepEqual(missing, [], 'no page load asked for a missing file');
      t.deepEqual(errors, []);
      await page.close();
    },
  );

  serial(
    `${vp.name} (${vp.width}x${vp.height}): Settings → API keys shows a new key once, /docs tries a request with it offline, revoking stops it`,
    async (t) => {
      const { org } = await cluster.org({ plan: 'pro', credits: 100, name: `Keys ${vp.name}` });
      const email = `keys-${vp.name}@workbench.test`;
      const user = await createUser(cluster.app.db, { email, organizationId: org.id, role: 'owner' });
      await setPassword(cluster.app.db, user.id, 'a long workbench password');
      // One browser profile for all tests: each signs in afresh as its own organization's owner.
      await chromium.browser.clearCookies();
      const page = await chromium.browser.newPage();
      await page.setViewportSize({ width: vp.width, height: vp.height });
      const base = cluster.app.httpUrl;
      const offsite: string[] = [];
      const missing: string[] = [];
      const errors: string[] = [];
      page.on('request', (r) => {
        if (!r.url().startsWith(base) && !r.url().startsWith('data:') && !r.url().startsWith('blob:')) offsite.push(r.url());
      });
      page.on('response', (r) => {
        if (r.status() === 404) missing.push(r.url());
      });
      page.on('pageerror', (err) => errors.push(err.message));
      // CSP refusals and script errors; HTTP statuses are judged above (the studio's first look at its session is a 401 by design).
      page.on('console', (m) => {
        if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text());
      });
      page.on('dialog', (d) => void d.accept());

      await page.goto(`${base}/studio/`);
      await page.fill('#email', email);
      await page.fill('#password', 'a long workbench password');
      await page.press('#password', 'Enter');
      await page.waitForSelector('h1 >> text=Jobs');
      t.is(await page.locator('nav.main a[href="/docs"]').count(), 1, 'the navigation links the docs');
      // On a phone the sections are behind the Menu button.
      if (await page.locator('header button.menu-toggle').isVisible()) await page.click('header button.menu-toggle');
      await page.click('nav.main a:has-text("Settings")');
      await page.click('a:has-text("API keys")');
      await page.waitForSelector('h2 >> text=API keys');
      t.is(await page.locator('#content a[href="/docs"]').count(), 1, 'the key page links the docs');
      await page.fill('#key-name', 'Explorer key');
      await page.click('button:has-text("Create key")');
      const key = (await page.locator('[data-testid="new-key-value"]').innerText()).trim();
      t.regex(key, /^vsk_[0-9A-Za-z]{43}$/);
      const keyRow = page.locator('tr', { hasText: 'Explorer key' });
      await keyRow.waitFor();
      t.is((await keyRow.locator('td[data-label="Key"]').innerText()).trim(), `vsk_…${key.slice(-4)}`);
      await shot(page, `${vp.name}-05-api-key-created`);
      // Shown once: after a reload only its last four characters are left.
      await page.reload();
      await page.waitForSelector('tr >> text=Explorer key');
      t.false((await page.content()).includes(key));
      t.is(await page.locator('[data-testid="new-key-value"]').count(), 0);

      // The explorer, from this server only; Authorize with the key, then try GET /api/jobs.
      const created = await cluster.api('POST', '/api/jobs', {
        key,
        body: { functionName: 'VideoShorts', fileUrl: `${mediaUrl}/talk.mp4`, name: 'Made with the key' },
      });
      t.is(created.status, 201);
      const lease = await leaseAnalysis(created.body.id);
      await agent.fail(lease.task_id, lease.lease_token, 'not needed here', false);
      await page.goto(`${base}/docs`);
      await page.waitForSelector('.swagger-ui .opblock', { timeout: 20_000 });
      // Allowed values and examples are in what the explorer shows.
      const createOp = page.locator('.opblock-post:has(.opblock-summary-path[data-path="/api/jobs"])').first();
      await createOp.locator('.opblock-summary').click();
      await createOp.locator('.body-param__example, .highlight-code, .microlight').first().waitFor();
      t.regex(await createOp.innerText(), /VideoShorts/);
      t.regex(await createOp.innerText(), /dQw4w9WgXcQ/);
      await createOp.locator('.opblock-summary').click();
      await page.click('button.authorize');
      await page.fill('input[aria-label="auth-bearer-value"]', key);
      await page.locator('.auth-container:has(input[aria-label="auth-bearer-value"]) button.authorize').click();
      await page.click('button.btn-done');
      const listOp = page.locator('.opblock-get:has(.opblock-summary-path[data-path="/api/jobs"])').first();
      await listOp.locator('.opblock-summary').click();
      await listOp.locator('button.try-out__btn').click();
      await listOp.locator('button.execute').click();
      const status = listOp.locator('.live-responses-table tbody .response-col_status').first();
      await status.waitFor({ timeout: 15_000 });
      t.is((await status.innerText()).trim(), '200');
      const body = await listOp.locator('.live-responses-table tbody .response-col_description pre').first().innerText();
      const parsed = JSON.parse(body);
      t.is(parsed.total, 1);
      t.is(parsed.data[0].title, 'Made with the key');
      await listOp.scrollIntoViewIfNeeded();
      await shot(page, `${vp.name}-06-docs-try-it-out`);
      t.deepEqual(offsite, [], 'the explorer loads nothing from another origin');

      // Revoke: the key stops working.
      await page.goto(`${base}/studio/#/settings/api-keys`);
      const row = page.locator('tr', { hasText: 'Explorer key' });
      await row.locator('button:has-text("Revoke")').click();
      await row.locator('td[data-label="Status"] >> text=Revoked').waitFor();
      await shot(page, `${vp.name}-07-api-key-revoked`);
      t.is((await cluster.api('GET', '/api/jobs', { key })).status, 401);

      const icon = await fetch(`${base}/favicon.ico`);
      t.is(icon.status, 200);
      t.regex(icon.headers.get('content-type') ?? '', /^image\//);
      t.deepEqual(missing, [], 'no page load asked for a missing file');
      t.deepEqual(errors, []);
      await page.close();
    },
  );
}
