import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/** The repository root (the folder with package.json), whether running from sources or dist/. */
export function repoRoot(): string {
  if (cached) return cached;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json')) || path.basename(dir) === 'dist') dir = path.dirname(dir);
  cached = dir;
  return dir;
}
