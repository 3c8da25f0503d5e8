#!/usr/bin/env node
// Builds the web studio (coordinator/studio, Vite) into dist/studio when the build is missing or
// older than its sources, so `npm start` and the browser tests always serve the current studio.
// `--force` builds anyway.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const studioDir = path.join(root, 'coordinator/studio');
const built = path.join(root, 'dist/studio/index.html');

// Folders count too: deleting a file changes only its folder's time.
const entriesUnder = (dir) => [
  dir,
  ...readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? entriesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)],
  ),
];

// Relative and `@shorts/common/…` specifiers in `import … from`, `export … from`, bare `import '…'`
// and `import('…')`.
const LOCAL_IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+|@shorts\/common\/[^'"]+)['"]/g;
const COMMON_PREFIX = '@shorts/common/';
const SCRIPT = /\.(?:[cm]?[jt]sx?)$/;

/** The file a local import names: relative ones are TypeScript imported with `.js` specifiers, and
 *  `@shorts/common/x` is common/src/x.ts (common/package.json's exports). */
function resolveImport(from, specifier) {
  const base = specifier.startsWith(COMMON_PREFIX)
    ? path.join(root, 'common/src', `${specifier.slice(COMMON_PREFIX.length)}.js`)
    : path.resolve(path.dirname(from), specifier);
  const candidates = [
    base,
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.js$/, '.tsx'),
    `${base}.ts`,
    `${base}.tsx`,
    path.join(base, 'index.ts'),
  ];
  return candidates.find((c) => existsSync(c) && statSync(c).isFile());
}

/**
 * Everything the build reads: the studio's own folder, and every file outside it that the studio
 * imports, followed through their own imports (@shorts/common/render/presets brings
 * common/src/invalid-input.ts), so a change to any of them makes the build stale.
 */
export function studioSources() {
  const seen = new Set(entriesUnder(studioDir));
  const queue = [...seen].filter((f) => SCRIPT.test(f) && statSync(f).isFile());
  while (queue.length) {
    const file = queue.pop();
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(LOCAL_IMPORT)) {
      const target = resolveImport(file, specifier);
      if (!target || seen.has(target)) continue;
      seen.add(target);
      if (SCRIPT.test(target)) queue.push(target);
    }
  }
  return [...seen];
}

export function studioIsFresh() {
  if (!existsSync(built)) return false;
  const builtAt = statSync(built).mtimeMs;
  return studioSources().every((f) => statSync(f).mtimeMs <= builtAt);
}

/** Returns true when it built; throws when the build fails. */
export function buildStudio({ force = false, log = (m) => process.stdout.write(`${m}\n`) } = {}) {
  if (!force && studioIsFresh()) return false;
  log('[studio] building the web studio (vite)');
  const vite = path.join(root, 'node_modules/vite/bin/vite.js');
  const res = spawnSync(process.execPath, [vite, 'build', '--config', path.join(root, 'coordinator/studio/vite.config.ts')], {
    stdio: 'inherit',
    cwd: root,
  });
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
