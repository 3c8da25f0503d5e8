#!/usr/bin/env node
// `npm test`: the same run on a newcomer's machine as in CI (.ci/run only starts Postgres and calls
// this). In order, stopping at the first failure:
//   1. the system tools the tests need (scripts/system-tools.mjs): installed with apt-get on
//      Debian/Ubuntu (as root or with sudo) when missing; elsewhere named, with how to get them,
//      and the run fails;
//   2. the shared media the tests compose their videos from (../shared/media) must be there;
//   3. lint: ESLint, Prettier's check and the import-cycle check (`npm run lint`);
//   4. the type-check (`npm run typecheck`), the web studio's build when stale, then ava.
// Arguments go to ava: `npm test -- test/jobs.test.ts`.
//
// Strict by default: CI=true for the tests, so a test whose tool or media is missing fails rather
// than skips (test/helpers/requirements.ts) and a test file that leaves a process or socket open
// fails the run (test/helpers/exit-when-done.ts). TEST_ALLOW_SKIPS=1 opts out on a machine that
// cannot have everything: missing tools and media are then reported, their tests skipped (ava
// counts them as skipped, never as passed), and a leaked handle is a warning. CI never sets it.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureSystemTools } from './system-tools.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const say = (msg) => process.stdout.write(`[test] ${msg}\n`);
const allowSkips = process.env.TEST_ALLOW_SKIPS === '1';

const env = { ...process.env };
if (allowSkips) delete env.CI;
else env.CI = 'true';

/** ../shared/media beside the checkout (or beside the folder of worktrees), as test/helpers/grid.ts finds it. */
const SHARED_MEDIA = [path.resolve(root, '../shared/media'), path.resolve(root, '../../shared/media')];

/** Runs one step with the test environment; resolves to its exit status (128 + n when killed by signal n). */
function step(what, command, args) {
  say(what);
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env, stdio: 'inherit' });
    // A SIGTERM or SIGHUP sent to this process alone is passed on, so the step stops and cleans
    // up rather than being orphaned.
    const forward = (signal) => child.kill(signal);
    process.on('SIGTERM', forward).on('SIGHUP', forward);
    child.on('error', (err) => {
      say(`${command}: ${err.message}`);
      resolve(127);
    });
    child.on('exit', (code, signal) => {
      process.off('SIGTERM', forward).off('SIGHUP', forward);
      resolve(code ?? 128 + ({ SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 }[signal] ?? 0));
    });
  });
}

function preflight() {
  const problems = [];
  const { missing, advice } = ensureSystemTools('test', { log: say });
  if (missing.length) problems.push(`missing system tools:\n${advice}`);
  if (!SHARED_MEDIA.some((dir) => existsSync(path.join(dir, 'grid_swwp2s.mpg')))) {
    problems.push(
      `the shared media folder is absent (looked for ${SHARED_MEDIA.join(' and ')}): tests compose their videos from its clips`,
    );
  }
  if (!problems.length) return true;
  for (const p of problems) for (const line of p.split('\n')) say(line);
  if (allowSkips) {
    say('TEST_ALLOW_SKIPS=1: the tests that need these are skipped (and counted as skipped), not passed');
    return true;
  }
  say('the tests need all of these (in CI as here); install them, or run TEST_ALLOW_SKIPS=1 npm test to skip the tests that need them');
  return false;
}

async function main() {
  // Ctrl-C reaches the whole foreground group by itself: the step ends, and then this run, with its status.
  process.on('SIGINT', () => {});
  if (!preflight()) return 1;
  const steps = [
    ['lint: ESLint, Prettier, import cycles (npm run lint)', 'npm', ['run', '-s', 'lint']],
    ['type-check (npm run typecheck)', 'npm', ['run', '-s', 'typecheck']],
    ['the web studio, when its build is stale', process.execPath, [path.join(root, 'scripts/build-studio.mjs')]],
    [
      `ava${allowSkips ? ' (TEST_ALLOW_SKIPS=1)' : ' (CI=true: a missing tool fails its test)'}`,
      process.execPath,
      [path.join(root, 'node_modules/ava/entrypoints/cli.mjs'), ...process.argv.slice(2)],
    ],
  ];
  for (const [what, command, args] of steps) {
    const status = await step(what, command, args);
    if (status !== 0) {
      say(`failed: ${what} (exit status ${status})`);
      return status;
    }
  }
  return 0;
}

process.exitCode = await main();
