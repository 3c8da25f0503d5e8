import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { repoRoot } from '@shorts/common/paths';
import { isAgentServiceConstructor, loadAgentProto } from '@shorts/common/proto';

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

test('the loaded AgentService is checked against the generated one, not assumed to be it', (t) => {
  const { AgentService } = loadAgentProto();
  t.true(isAgentServiceConstructor(AgentService));
  const client = new AgentService('127.0.0.1:1', grpc.credentials.createInsecure());
  t.is(typeof client.heartbeat, 'function');
  client.close();
  // A service that lacks one RPC, a bare definition (no client class) and nothing at all are refused.
  const { Heartbeat: _gone, ...rest } = AgentService.service;
  t.false(isAgentServiceConstructor(grpc.makeClientConstructor(rest, 'shorts.v1.AgentService')));
  t.false(isAgentServiceConstructor({ service: AgentService.service }));
  t.false(isAgentServiceConstructor(undefined));
});
