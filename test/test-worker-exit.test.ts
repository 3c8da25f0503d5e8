// Two guards every test worker shares, run here on a throwaway ava project:
// - test/helpers/exit-when-done.ts: a test file that leaves a child process or a server running
//   must not hold the whole run (it once held CI to its time limit); in CI it fails the run.
// - test/helpers/requirements.ts: a test that cannot run here is counted as skipped, not passed;
//   in CI a missing system tool or missing shared media fails instead; what a host may lack on purpose
//   (a model file) is still a skip.
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { repoRoot } from '@shorts/common/paths';
import { processAlive } from './helpers/processes.js';

let dir: string;

test.before(async () => {
  // Inside the repository, so the throwaway tests resolve `ava` from its node_modules.
  await mkdir(path.join(repoRoot(), '.tmp'), { recursive: true });
  dir = await mkdtemp(path.join(repoRoot(), '.tmp', 'worker-exit-'));
  await writeFile(
    path.join(dir, 'package.json'),
    JSON.stringify({
      type: 'module',
      ava: {
        files: ['*.test.ts'],
        extensions: { ts: 'module' },
        nodeArguments: ['--import=tsx'],
        workerThreads: false,
        require: [path.join(repoRoot(), 'test/helpers/exit-when-done.ts')],
      },
    }),
  );
  await writeFile(
    path.join(dir, 'leak.test.ts'),
    [
      "import test from 'ava';",
      "import { spawn } from 'node:child_process';",
      "import { writeFileSync } from 'node:fs';",
      "import net from 'node:net';",
      "test('leaks a child and a server', async (t) => {",
      "  const child = spawn('sleep', ['600'], { stdio: ['ignore', 'pipe', 'pipe'] });",
      "  writeFileSync(new URL('./child.pid', import.meta.url), String(child.pid));",
      '  const server = net.createServer();',
      "  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));",
      "  writeFileSync(new URL('./server.port', import.meta.url), String((server.address() as net.AddressInfo).port));",
      '  t.pass();',
      '});',
    ].join('\n'),
  );
  await writeFile(
    path.join(dir, 'needs.test.ts'),
    [
      "import test from 'ava';",
      `import { needing } from ${JSON.stringify(path.join(repoRoot(), 'test/helpers/requirements.ts'))};`,
      "needing({ media: false })('reads the shared media', (t) => { t.pass(); });",
      "needing({ tools: { 'frobnicator': false } })('runs the frobnicator', (t) => { t.pass(); });",
      "needing({ optional: { 'a model file': false } }).serial('runs the model', (t) => { t.pass(); });",
      "needing({ tools: { 'ffmpeg': true }, media: true })('has all it needs', (t) => { t.pass(); });",
    ].join('\n'),
  );
});
test.after.always(() => (dir ? rm(dir, { recursive: true, force: true }) : undefined));

async function runAva(ci: string): Promise<{ code: number; said: string }> {
  const ava = path.join(repoRoot(), 'node_modules/ava/entrypoints/cli.mjs');
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [ava, '--verbose'],
      { cwd: dir, timeout: 120_000, killSignal: 'SIGKILL', env: { ...process.env, CI: ci } },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, said: stdout + stderr });
      },
    );
  });
}

test.serial(
  'outside CI: a leaking worker is named, its child killed and the run ends; tests that cannot run are counted as skipped',
  async (t) => {
    const { code, said } = await runAva('');
    t.is(code, 0, said);
    t.regex(said, /2 tests passed/);
    t.regex(said, /3 tests skipped/);
    t.regex(said, /reads the shared media \[skipped: \S+shared\/media absent\]/);
    t.regex(said, /runs the frobnicator \[skipped: frobnicator not installed\]/);
    t.regex(said, /runs the model \[skipped: a model file absent\]/);
    const port = await readFile(path.join(dir, 'server.port'), 'utf8');
    t.regex(
      said,
      new RegExp(
        `\\[test-worker\\] \\S*leak\\.test\\.ts left open: .*child process pid \\d+ \\(sleep\\).*server listening on 127\\.0\\.0\\.1:${port}.*; ending the worker`,
      ),
    );
    const pid = Number(await readFile(path.join(dir, 'child.pid'), 'utf8'));
    t.false(processAlive(pid), 'the leaked sleep was killed');
  },
);

test.serial(
  'in CI: a leaked handle fails the run naming it, a missing tool or missing media fails its test, a missing model file is still a skip',
  async (t) => {
    const { code, said } = await runAva('true');
    t.not(code, 0, said);
    t.regex(said, /\[test-worker\] \S*leak\.test\.ts left open: .*child process pid \d+ \(sleep\).*; this fails the run \(CI=true\)/);
    t.regex(said, /leak\.test\.ts exited with a non-zero exit code: 1/);
    t.regex(said, /runs the frobnicator/);
    t.regex(said, /frobnicator not installed: CI installs it \(\.ci\/run\), so this is a broken CI machine, not a skip/);
    t.regex(said, /\S+shared\/media absent: CI runs beside the shared media \(\S+\), so this is a broken CI machine, not a skip/);
    t.regex(said, /2 tests failed/);
    t.regex(said, /1 test skipped/, 'only the optional model stays a skip');
    t.notRegex(said, /reads the shared media \[skipped/);
    const pid = Number(await readFile(path.join(dir, 'child.pid'), 'utf8'));
    t.false(processAlive(pid), 'the leaked sleep was killed');
  },
);
