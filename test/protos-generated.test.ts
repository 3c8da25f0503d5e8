import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '@shorts/common/paths';

const committed = path.join(repoRoot(), 'common/src/generated');

function filesUnder(dir: string, prefix = ''): string[] {
  return readdirSync(path.join(dir, prefix), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? filesUnder(dir, path.join(prefix, e.name)) : [path.join(prefix, e.name)]))
    .sort();
}

test('the committed gRPC types match protos/ (run `npm run protos` after editing a .proto)', (t) => {
  const fresh = mkdtempSync(path.join(os.tmpdir(), 'protos-'));
  try {
    execFileSync(process.execPath, ['--import=tsx', path.join(repoRoot(), 'scripts/gen-protos.ts'), fresh], {
      cwd: repoRoot(),
      stdio: 'pipe',
    });
    const want = filesUnder(fresh);
    t.true(want.length > 5, 'the generator wrote the service and its messages');
    t.deepEqual(filesUnder(committed), want, 'the same files');
    const stale = want.filter((f) => readFileSync(path.join(fresh, f), 'utf8') !== readFileSync(path.join(committed, f), 'utf8'));
    t.deepEqual(stale, [], 'files whose content differs from what protos/ generates');
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
});
