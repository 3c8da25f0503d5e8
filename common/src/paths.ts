import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/** The repository root (the folder with package.json and common/), whether running from sources or
 *  dist/; common/'s own package.json (and dist/common's copy) is not it. */
export function repoRoot(): string {
  if (cached) return cached;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  const isRoot = (d: string) =>
    existsSync(path.join(d, 'package.json')) && existsSync(path.join(d, 'common/src')) && path.basename(d) !== 'dist';
  while (!isRoot(dir)) {
    if (path.dirname(dir) === dir) throw new Error('the repository root (package.json beside common/src) was not found');
    dir = path.dirname(dir);
  }
  cached = dir;
  return dir;
}
