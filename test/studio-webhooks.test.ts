import test from 'ava';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { CHROMIUM_PATH, launchChromium, screenshotter } from './helpers/browser.js';
import { needing } from './helpers/requirements.js';
import { repoRoot } from '@shorts/common/paths';
import { createUser } from '../coordinator/src/tenancy/tenancy.js';
import { setPassword } from '../coordinator/src/tenancy/sessions.js';

// Issue 37 in a real browser: Settings → Webhooks shows the organization's signing secret on request
// and rotates it, the old one still listed while it signs. Screens go to test/.out/webhooks/.

const TOOLS = { [`chromium (${CHROMIUM_PATH})`]: existsSync(CHROMIUM_PATH) };
const serial = needing({ tools: TOOLS }).serial;

let cluster: TestCluster;
let chromium: Awaited<ReturnType<typeof launchChromium>>;
let shot: Awaited<ReturnType<typeof screenshotter>>;

test.before(async () => {
  if (!Object.values(TOOLS).every(Boolean)) return;
  const build = spawnSync(process.execPath, [path.join(repoRoot(), 'scripts/build-studio.mjs')], { stdio: 'inherit' });
  if (build.status !== 0) throw new Error('the studio build failed');
  cluster = await startCluster('studio_webhooks');
  chromium = await launchChromium();
  shot = await screenshotter('webhooks');
});
test.after.always(async () => {
  await chromium?.close();
  await cluster?.close();
});

serial('Settings → Webhooks shows the secret on request and rotates it, naming until when the old one signs', async (t) => {
  const { org, key } = await cluster.org({ name: 'Hooks studio' });
  const email = `hooks-${org.id}@studio.test`;
  const user = await createUser(cluster.app.db, { email, organizationId: org.id, role: 'owner' });
  await setPassword(cluster.app.db, user.id, 'a long studio password');
  const before = (await cluster.api('GET', '/api/webhooks/secret', { key })).body;
  const page = await chromium.browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('dialog', (d) => void d.accept());

  await page.goto(`${cluster.app.httpUrl}/studio/`);
  await page.fill('#email', email);
  await page.fill('#password', 'a long studio password');
  await page.press('#password', 'Enter');
  await page.waitForSelector('h1 >> text=Jobs');
  await page.goto(`${cluster.app.httpUrl}/studio/#/settings`);
  await page.click('nav.subnav a:has-text("Webhooks")');
  await page.waitForSelector('h2 >> text=Webhooks');
  const secret = page.locator('[data-testid="webhook-secret"]');
  await secret.waitFor();
  t.false((await secret.innerText()).includes(before.secret.slice(6)), 'hidden until asked');
  await page.click('button:has-text("Show")');
  t.is((await secret.innerText()).trim(), before.standardSecret);
  t.is(await page.locator('[data-testid="webhook-previous"]').count(), 0);

  await page.click('button:has-text("Rotate secret")');
  await page.waitForSelector('[data-testid="webhook-previous"]');
  const after = (await cluster.api('GET', '/api/webhooks/secret', { key })).body;
  t.not(after.secret, before.secret);
  t.is(after.previous.secret, before.secret);
  t.is((await secret.innerText()).trim(), after.standardSecret);
  t.regex(await page.locator('[data-testid="webhook-previous"]').innerText(), /still signs deliveries until/);
  await shot(page, '01-rotated');
  // After a reload the page reads the same from the API.
  await page.reload();
  await page.waitForSelector('[data-testid="webhook-previous"]');
  await page.click('button:has-text("Show")');
  t.is((await secret.innerText()).trim(), after.standardSecret);
  t.deepEqual(errors, []);
  await page.close();
});
