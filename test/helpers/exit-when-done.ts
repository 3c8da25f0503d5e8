// Loaded into every test worker (package.json ava.require). A worker exits when its event loop
// drains after the last test; one that a test left a child process, server or socket to is never
// freed, and the whole run would wait on it. Such leftovers are named on stderr, child processes
// killed, and the worker let go. In CI (CI=true, as .ci/run sets) a leak fails the run: the worker
// exits 1, which ava reports against the file; elsewhere it is a warning.
import test, { registerCompletionHandler } from 'ava';
import { ChildProcess } from 'node:child_process';
import net from 'node:net';

const GRACE_MS = 3000;

const inCi = () => process.env.CI === 'true' || process.env.CI === '1';

/** A leftover handle as a person would look for it in the test: a child's command, a socket's ends. */
function describe(handle: unknown): string | undefined {
  if (handle instanceof ChildProcess) {
    return handle.exitCode === null && handle.signalCode === null ? `child process pid ${handle.pid} (${handle.spawnfile})` : undefined;
  }
  if (handle instanceof net.Server) {
    const address = handle.address();
    return `server listening on ${typeof address === 'string' ? address : address ? `${address.address}:${address.port}` : 'an unbound address'}`;
  }
  if (handle instanceof net.Socket) {
    if (handle.destroyed || (!handle.remoteAddress && !handle.localAddress)) return undefined; // stdio pipes and ava's channel
    return `socket ${handle.localAddress}:${handle.localPort} -> ${handle.remoteAddress}:${handle.remotePort}`;
  }
  return undefined;
}

/**
 * The handles that hold the event loop open, as objects: Node's own list, which it keeps private
 * (getActiveResourcesInfo names them only). Checked here, so a Node without it says so.
 */
function activeHandles(): unknown[] {
  if (!('_getActiveHandles' in process) || typeof process._getActiveHandles !== 'function') {
    throw new Error('process._getActiveHandles is gone from this Node: the leftover check cannot name what a test left open');
  }
  const handles: unknown = process._getActiveHandles();
  if (!Array.isArray(handles)) throw new Error('process._getActiveHandles() did not answer a list');
  return handles;
}

registerCompletionHandler(() => {
  setTimeout(() => {
    // stdio and ava's own channel are pipes and TTYs; this timer is one Timeout.
    const left = process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap' && r !== 'PipeWrap');
    left.splice(left.indexOf('Timeout'), 1);
    const handles = activeHandles();
    const named = handles.map(describe).filter((d): d is string => Boolean(d));
    const children = handles.filter((h): h is ChildProcess => h instanceof ChildProcess && h.exitCode === null && h.signalCode === null);
    if (left.length > 0 || named.length > 0) {
      const file = test.meta.file.replace(/^.*\/test\//, 'test/');
      const what = [...named, ...(left.length ? [`resources ${left.join(', ')}`] : [])].join('; ');
      const verdict = inCi() ? "this fails the run (CI=true): close it in the test's teardown" : 'ending the worker';
      console.error(`[test-worker] ${file} left open: ${what}; ${verdict}`);
      for (const c of children) c.kill('SIGKILL');
      process.exit(inCi() ? 1 : 0);
    }
    process.exit(0);
  }, GRACE_MS).unref();
});
