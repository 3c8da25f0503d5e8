import type { ExecutionContext } from 'ava';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../../common/src/paths.js';

// What a test needs from the host. A system tool is installed by CI (.ci/run): there, its absence is
// a failure that says what is missing. Elsewhere the test is skipped, saying why. The shared media
// folder is never in a clean clone, so without it a test is skipped everywhere.

export const MEDIA = path.resolve(repoRoot(), '../shared/media');

export const havePocketsphinx = existsSync('/usr/bin/pocketsphinx_continuous');

const inCi = () => process.env.CI === 'true' || process.env.CI === '1';

/** True when the test can go on; otherwise it has failed (CI) or passed as skipped, with the reason. */
export function requireTools(t: ExecutionContext, tools: Record<string, boolean>): boolean {
  const missing = Object.entries(tools).filter(([, ok]) => !ok).map(([name]) => name);
  if (!missing.length) return true;
  if (inCi()) {
    t.fail(`${missing.join(' and ')} not installed: CI installs ${missing.length > 1 ? 'them' : 'it'} (.ci/run), so this is a broken CI machine, not a skip`);
  } else {
    t.log(`skipped: ${missing.join(' and ')} not installed`);
    t.pass();
  }
  return false;
}

/** True when the shared media folder is there; otherwise the test passes as skipped. */
export function requireMedia(t: ExecutionContext): boolean {
  if (existsSync(MEDIA)) return true;
  t.log(`skipped: ${MEDIA} absent`);
  t.pass();
  return false;
}
