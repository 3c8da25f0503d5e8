import type { Logger } from './logger.js';

/** How long an orderly stop may take before the process exits anyway (a hung pool, a stuck RPC).
 *  Sent to a supervising parent with "ready", so it never kills a stop that is still in time. */
export const STOP_DEADLINE_MS = 40_000;

/**
 * SIGTERM / SIGINT run `stop` once, then exit 0 (1 when stopping failed or took too long).
 *
 * A process started by a supervisor with an IPC channel (`npm start`) also stops when that channel
 * closes: the kernel closes it when the supervisor dies, even by SIGKILL, so the coordinator (and
 * with it the embedded Postgres it started) and the agent never outlive it holding ports and data.
 */
export function stopOnSignals(log: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const stopOnce = (reason: Record<string, unknown>) => {
    if (stopping) return;
    stopping = true;
    log.info('stopping', reason);
    setTimeout(() => {
      log.error('stop took too long; exiting', { deadlineMs: STOP_DEADLINE_MS });
      process.exit(1);
    }, STOP_DEADLINE_MS).unref();
    stop().then(
      () => process.exit(0),
      (err) => {
        log.error('stop failed', { err });
        process.exit(1);
      },
    );
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => stopOnce({ signal }));
  if (process.send) {
    if (!process.connected) stopOnce({ reason: 'parent process gone' });
    else process.once('disconnect', () => stopOnce({ reason: 'parent process gone' }));
  }
}

/** Tells a supervising parent (if there is one with an IPC channel) that this process is ready, with
 *  whatever else the parent needs to know of it (`about`); resolves once the message is on the
 *  channel, so a log line written after it cannot reach anyone before the parent can know. */
export function tellParentReady(about: Record<string, unknown> = {}): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send || !process.connected) return resolve();
    process.send({ ...about, type: 'ready', stopDeadlineMs: STOP_DEADLINE_MS }, undefined, {}, () => resolve());
  });
}

/** Exits 1 after telling a supervising parent why start-up failed (it prints that when it gives up). */
export function exitStartFailed(message: string): never {
  if (process.send && process.connected) {
    process.send({ type: 'start-failed', message }, () => process.exit(1));
    // The send completes within milliseconds; never wait on a parent that stopped reading.
    setTimeout(() => process.exit(1), 2000).unref();
  } else {
    process.exit(1);
  }
  return undefined as never;
}
