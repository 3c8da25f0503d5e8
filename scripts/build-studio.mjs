#!/usr/bin/env node
// Builds the web studio (coordinator/studio, Vite) into dist/studio when the build is missing or
// older than its sources, so `npm start` and the browser tests always serve the current studio.
// `--force` builds anyway.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sources = [path.join(root, 'coordinator/studio'), path.join(root, 'common/src/render/presets.ts'), path.join(root, 'common/src/reframe/types.ts')];
const built = path.join(root, 'dist/studio/index.html');

function newest(p) {
  const s = statSync(p);
  if (!s.isDirectory()) return s.mtimeMs;
  return readdirSync(p).reduce((m, name) => Math.max(m, newest(path.join(p, name))), s.mtimeMs);
}

export function studioIsFresh() {
  return existsSync(built) && statSync(built).mtimeMs >= Math.max(...sources.filter(existsSync).map(newest));
}

/** Returns true when it built; throws when the build fails. */
export function buildStudio({ force = false, log = (m) => process.stdout.write(`${m}\n`) } = {}) {
  if (!force && studioIsFresh()) return false;
  log('[studio] building the web studio (vite)');
  const vite = path.join(root, 'node_modules/vite/bin/vite.js');
  const res = spawnSync(process.execPath, [vite, 'build', '--config', path.join(root, 'coordinator/studio/vite.config.ts')], { stdio: 'inherit', cwd: root });
  if (res.status !== 0) throw new Error('the studio build failed (see above)');
  return true;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    buildStudio({ force: process.argv.includes('--force') });
  } catch (err) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
}
