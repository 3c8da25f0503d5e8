import { createLogger } from '../../common/src/logger.js';
import { loadConfig } from './config.js';
import { startCoordinator } from './coordinator.js';

const config = loadConfig();
const log = createLogger({ service: 'coordinator' }, config.logLevel);

startCoordinator(config, log).then((app) => {
  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      log.info('stopping', { signal });
      app.close().then(() => process.exit(0), () => process.exit(1));
    });
  }
}, (err) => {
  log.error('coordinator failed to start', { err });
  process.exit(1);
});
