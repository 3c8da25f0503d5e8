// Compiled code (dist/) imports `@shorts/common/x` as the sources do. Node finds the nearest
// node_modules/@shorts/common, which for dist/ must be the compiled common (dist/common), not the
// TypeScript sources the workspace link (node_modules/@shorts/common -> common/) points to. So the
// build gives dist/ its own link and a copy of common's package.json (whose exports name src/*.js).
import { copyFileSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export function linkCompiledCommon(dist = path.join(root, 'dist')) {
  mkdirSync(path.join(dist, 'common'), { recursive: true });
  copyFileSync(path.join(root, 'common/package.json'), path.join(dist, 'common/package.json'));
  const link = path.join(dist, 'node_modules/@shorts/common');
  mkdirSync(path.dirname(link), { recursive: true });
  rmSync(link, { force: true, recursive: true });
  symlinkSync('../../common', link, 'dir');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) linkCompiledCommon();
