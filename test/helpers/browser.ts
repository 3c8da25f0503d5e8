import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { repoRoot } from '@shorts/common/paths';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** Debian's chromium, headless, with everything that would phone out switched off (the network is closed). */
export async function launchChromium(): Promise<{ browser: BrowserContext; close(): Promise<void> }> {
  const userDataDir = await mkdtemp(path.join(os.tmpdir(), 'studio-chromium-'));
  const browser = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--autoplay-policy=no-user-gesture-required',
    ],
    viewport: { width: 1280, height: 900 },
    acceptDownloads: true,
  });
  return {
    browser,
    async close() {
      await browser.close().catch(() => undefined);
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}

/** Screenshots go to test/.out/<run>/ (git-ignored) so a person can look at every screen. */
export async function screenshotter(run: string): Promise<(page: Page, name: string) => Promise<string>> {
  const dir = path.join(repoRoot(), 'test', '.out', run);
  await mkdir(dir, { recursive: true });
  return async (page, name) => {
    const file = path.join(dir, `${name}.png`);
    // Chromium now and then answers "Unable to capture screenshot" for a full-page capture on a busy
    // machine (seen in CI with both cores taken); the picture is for a person, so try again, then
    // settle for the viewport rather than fail the test it illustrates.
    for (let attempt = 0; ; attempt++) {
      try {
        await page.screenshot({ path: file, fullPage: attempt < 2 });
        return file;
      } catch (err) {
        if (attempt >= 2 || !/Unable to capture screenshot/.test(String(err))) throw err;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  };
}

export type { Browser, Page };
