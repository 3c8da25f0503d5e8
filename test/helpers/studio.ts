// What the studio's browser tests set up alike: the built studio, a user who signs in with a
// password, and a page signed in as that user, opened on a job.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '@shorts/common/paths';
import { setPassword } from '../../coordinator/src/tenancy/sessions.js';
import { createUser } from '../../coordinator/src/tenancy/tenancy.js';
import { CHROMIUM_PATH, type launchChromium, type Page } from './browser.js';
import type { TestCluster } from './cluster.js';

export const STUDIO_PASSWORD = 'a long studio password';

/** Debian's chromium, as needing() names a missing tool. */
export const CHROMIUM_TOOL = { [`chromium (${CHROMIUM_PATH})`]: existsSync(CHROMIUM_PATH) };

export type Chromium = Awaited<ReturnType<typeof launchChromium>>;

/** Builds the studio (scripts/build-studio.mjs) the coordinator serves. */
export function buildStudio(): void {
  const build = spawnSync(process.execPath, [path.join(repoRoot(), 'scripts/build-studio.mjs')], { stdio: 'inherit' });
  if (build.status !== 0) throw new Error('the studio build failed');
}

/** An owner of the organization who signs in as `email` with STUDIO_PASSWORD. */
export async function studioUser(cluster: TestCluster, organizationId: string, email: string) {
  const user = await createUser(cluster.app.db, { email, organizationId, role: 'owner' });
  await setPassword(cluster.app.db, user.id, STUDIO_PASSWORD);
  return user;
}

/**
 * A new page signed in to the studio at `baseUrl` as `email` (the browser's earlier session dropped
 * first: its profile shares one cookie jar), then on the page of job `jobId` once `ready` shows
 * there. The page's uncaught errors collect in `pageErrors`.
 */
export async function signInToJobPage(
  chromium: Chromium,
  baseUrl: string,
  email: string,
  jobId: string,
  opts: { ready: string; viewport?: { width: number; height: number } },
): Promise<{ page: Page; pageErrors: string[] }> {
  await chromium.browser.clearCookies();
  const page = await chromium.browser.newPage();
  if (opts.viewport) await page.setViewportSize(opts.viewport);
  const pageErrors: string[] = [];
  page.on('pageerror', (err) => pageErrors.push(err.message));
  await page.goto(`${baseUrl}/`);
  await page.waitForSelector('text=Sign in to Shorts Studio');
  await page.fill('#email', email);
  await page.fill('#password', STUDIO_PASSWORD);
  await page.press('#password', 'Enter');
  await page.waitForSelector('h1 >> text=Jobs');
  await page.goto(`${baseUrl}/studio/#/jobs/${jobId}`);
  await page.waitForSelector(opts.ready);
  return { page, pageErrors };
}
