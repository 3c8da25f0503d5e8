// test/helpers/exit-when-done.ts, loaded into every worker: a test file that leaves a child process
// running must not hold the whole run (it once held CI to its time limit). Run here on a throwaway
// ava project whose only test leaks `sleep 600`.
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../common/src/paths.js';
import { processAlive } from './helpers/processes.js';

const run = promisify(execFile);

test('a worker whose test leaves a child running names it, kills it and exits; the run ends', async (t) => {
  // Inside the repository, so the throwaway test resolves `ava` from its node_modules.
  await mkdir(path.join(repoRoot(), '.tmp'), { recursive: true });
  const dir = await mkdtemp(path.join(repoRoot(), '.tmp', 'worker-exit-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({
    type: 'module',
    ava: {
      files: ['*.test.ts'], extensions: { ts: 'module' }, nodeArguments: ['--import=tsx'], workerThreads: false,
      require: [path.join(repoRoot(), 'test/helpers/exit-when-done.ts')],
    },
  }));
  await writeFile(path.join(dir, 'leak.test.ts'), [
    "import test from 'ava';",
    "import { spawn } from 'node:child_process';",
    "import { writeFileSync } from 'node:fs';",
    "test('leaks a child', (t) => {",
    "  const child = spawn('sleep', ['600'], { stdio: ['ignore', 'pipe', 'pipe'] });",
    "  writeFileSync(new URL('./child.pid', import.meta.url), String(child.pid));",
    '  t.pass();',
    '});',
  ].join('\n'));

  const ava = path.join(repoRoot(), 'node_modules/ava/entrypoints/cli.mjs');
  const { stdout, stderr } = await run(process.execPath, [ava], { cwd: dir, timeout: 120_000, killSignal: 'SIGKILL', env: { ...process.env, CI: '' } });
  const said = stdout + stderr;
  t.regex(said, /1 test passed/);
  t.regex(said, /\[test-worker\] \S*leak\.test\.ts left open: .*child pid \d+ \(sleep\); ending the worker/);
  const pid = Number(await readFile(path.join(dir, 'child.pid'), 'utf8'));
  t.false(processAlive(pid), 'the leaked sleep was killed');
});
