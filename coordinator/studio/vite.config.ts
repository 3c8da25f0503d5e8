import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import preact from '@preact/preset-vite';

const here = path.dirname(fileURLToPath(import.meta.url));

// Built into dist/studio and served by the coordinator under /studio/ (coordinator/src/api/studio.ts).
export default defineConfig(({ command }) => ({
  root: here,
  base: '/studio/',
  // Devtools hooks only while developing (in a build they only cost bytes and break source maps).
  plugins: [preact({ devToolsEnabled: command === 'serve' })],
  logLevel: 'warn',
  // `@shorts/common/x` is common/src/x.ts: its package's exports name the .js that tsx and tsc map
  // to the TypeScript source, a step Vite's resolver does not take inside a package.
  resolve: { alias: [{ find: /^@shorts\/common\/(.*)$/, replacement: path.resolve(here, '../../common/src/$1') }] },
  build: {
    outDir: path.resolve(here, '../../dist/studio'),
    emptyOutDir: true,
    sourcemap: true,
    target: 'es2022',
    // Slow plugin timings are reported on a busy machine; they are not build problems.
    rolldownOptions: { checks: { pluginTimings: false } },
  },
  // `npx vite --config coordinator/studio/vite.config.ts` for development against a running coordinator.
  server: { proxy: { '/api': 'http://127.0.0.1:3000', '/objects': 'http://127.0.0.1:3000' } },
}));
