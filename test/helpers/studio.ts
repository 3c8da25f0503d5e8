// What the studio's browser tests set up alike: the built studio, a cluster and a browser for a test
// file, a user who signs in with a password, and a page signed in as that user, opened on a job.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Word } from '@shorts/common/text/transcript';
import { repoRoot } from '@shorts/common/paths';
import { setPassword } from '../../coordinator/src/tenancy/sessions.js';
import { createUser } from '../../coordinator/src/tenancy/tenancy.js';
import { CHROMIUM_PATH, launchChromium, type Page } from './browser.js';
import { startCluster, type TestCluster } from './cluster.js';
import { insertCompletedJob } from './completed-job.js';
import { makeTestVideo } from './media.js';

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

/**
 * The hooks of a studio test file: before its tests, when chromium is at hand, the studio built, a
 * cluster `name` started and chromium launched; after them, both closed. Their `cluster` and
 * `chromium` are read once the tests run.
 */
export function studioCluster(name: string): { readonly cluster: TestCluster; readonly chromium: Chromium } {
  let cluster: TestCluster | undefined;
  let chromium: Chromium | undefined;
  test.before(async () => {
    if (!Object.values(CHROMIUM_TOOL).every(Boolean)) return;
    buildStudio();
    cluster = await startCluster(name);
    chromium = await launchChromium();
  });
  test.after.always(async () => {
    await chromium?.close();
    await cluster?.close();
  });
  const started = <T>(what: T | undefined): T => {
    if (what === undefined) throw new Error(`${name}: read before the hooks started it`);
    return what;
  };
  return {
    get cluster() {
      return started(cluster);
    },
    get chromium() {
      return started(chromium);
    },
  };
}

const HELLO_THERE: Word[] = [
  { text: 'hello', start: 0.5, end: 1.5 },
  { text: 'there', start: 1.5, end: 2.5 },
];

/** A completed job of the organization over a 4 s 640x360 test video with the words "hello there",
 *  one short of them (0-3 s), and a page signed in as `email` on it once the caption preview shows. */
export async function helloThereJobPage(
  cluster: TestCluster,
  chromium: Chromium,
  organizationId: string,
  email: string,
): Promise<{ page: Page; pageErrors: string[]; jobId: string }> {
  const source = await makeTestVideo(path.join(cluster.dataDir, `${email}.mp4`), { seconds: 4, width: 640, height: 360, gop: 5 });
  const jobId = await insertCompletedJob(cluster.app, {
    organizationId,
    sourcePath: source,
    words: HELLO_THERE,
    shorts: [{ startTime: 0, endTime: 3, title: 'Hello there' }],
  });
  const signedIn = await signInToJobPage(chromium, cluster.app.httpUrl, email, jobId, {
    ready: '[data-testid="caption-preview"]',
    viewport: { width: 1366, height: 1400 },
  });
  return { ...signedIn, jobId };
}

/** A page signed in as `email`, a studio user of a new organization, on the job `job` makes for it
 *  once `ready` shows; `download(label)` clicks the link of that aria-label there and answers the
 *  file's suggested name and its text. */
export async function signInToNewJob(
  cluster: TestCluster,
  chromium: Chromium,
  email: string,
  job: (organizationId: string) => Promise<string>,
  ready: string,
) {
  const { org } = await cluster.org({ name: `Studio of ${email}` });
  await studioUser(cluster, org.id, email);
  const { page, pageErrors } = await signInToJobPage(chromium, cluster.app.httpUrl, email, await job(org.id), { ready });
  const download = async (label: string) => {
    const [file] = await Promise.all([page.waitForEvent('download'), page.click(`a[aria-label="${label}"]`)]);
    return { name: file.suggestedFilename(), text: await readFile((await file.path())!, 'utf8') };
  };
  return { page, pageErrors, download };
}
