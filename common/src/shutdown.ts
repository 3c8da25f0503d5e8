import type { Logger } from './logger.js';

/** SIGTERM / SIGINT run `stop` once, then exit 0 (1 when stopping failed). */
export function stopOnSignals(log: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      log.info('stopping', { signal });
      stop().then(() => process.exit(0), (err) => {
        log.error('stop failed', { err });
        process.exit(1);
      });
    });
  }
}
