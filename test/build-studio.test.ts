import test from 'ava';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { repoRoot } from '@shorts/common/paths';
// @ts-expect-error: a plain ES module with no type declarations (it runs before any build).
import { buildStudio, studioSources } from '../scripts/build-studio.mjs';

// `npm start` and the browser tests rebuild the studio only when it is stale. Whatever the bundle
// was made from must be watched, or an edit to it (a shared module under common/src, say) leaves
// the studio served from the old code.

test('the staleness check watches every repository file the studio bundle was built from', async (t) => {
  buildStudio({ log: () => undefined });
  const assets = path.join(repoRoot(), 'dist/studio/assets');
  const maps = (await readdir(assets)).filter((f) => f.endsWith('.js.map'));
  t.true(maps.length > 0, 'the build writes source maps');
  const bundled = new Set<string>();
  for (const map of maps) {
    const { sources } = JSON.parse(await readFile(path.join(assets, map), 'utf8')) as { sources: string[] };
    for (const source of sources) {
      const file = path.resolve(assets, source);
      if (!file.includes(`${path.sep}node_modules${path.sep}`) && file.startsWith(repoRoot())) bundled.add(file);
    }
  }
  t.true(
    [...bundled].some((f) => f.endsWith('common/src/invalid-input.ts')),
    'the studio reaches common/src/invalid-input.ts through the caption presets',
  );
  const watched = new Set<string>(studioSources());
  const unwatched = [...bundled].filter((f) => !watched.has(f)).map((f) => path.relative(repoRoot(), f));
  t.deepEqual(unwatched, []);
});
