import { createLogger } from '@shorts/common/logger';
import { stopOnSignals, tellParentReady } from '@shorts/common/shutdown';
import { loadConfig } from './config.js';
import { startCoordinator } from './coordinator.js';

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
} catch (err) {
  createLogger({ service: 'coordinator' }).error('invalid configuration', { message: (err as Error).message });
  process.exit(1);
}
const log = createLogger({ service: 'coordinator' }, config.logLevel);

startCoordinator(config, log).then(
  (app) => {
    stopOnSignals(log, () => app.close());
    void tellParentReady();
  },
  (err) => {
    log.error('coordinator failed to start', { err });
    process.exit(1);
  },
);
