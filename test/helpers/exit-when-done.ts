// Loaded into every test worker (package.json ava.require). A worker exits when its event loop
// drains after the last test; one that a test left a child process, server or socket to is never
// freed, and the whole run would wait on it. Such leftovers are named on stderr, child processes
// killed, and the worker let go.
import test, { registerCompletionHandler } from 'ava';
import { ChildProcess } from 'node:child_process';

const GRACE_MS = 3000;

registerCompletionHandler(() => {
  setTimeout(() => {
    // stdio and ava's own channel are pipes and TTYs; this timer is one Timeout.
    const left = process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap' && r !== 'PipeWrap');
    left.splice(left.indexOf('Timeout'), 1);
    const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
    const children = handles.filter((h): h is ChildProcess => h instanceof ChildProcess && h.exitCode === null && h.signalCode === null);
    if (left.length > 0 || children.length > 0) {
      const file = test.meta.file.replace(/^.*\/test\//, 'test/');
      console.error(`[test-worker] ${file} left open: ${[...left, ...children.map((c) => `child pid ${c.pid} (${c.spawnfile})`)].join(', ')}; ending the worker`);
      for (const c of children) c.kill('SIGKILL');
    }
    process.exit(0);
  }, GRACE_MS).unref();
});
