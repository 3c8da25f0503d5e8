import { createLogger } from '@shorts/common/logger';
import { stopOnSignals, tellParentReady } from '@shorts/common/shutdown';
import { loadConfig } from './config.js';
import { embeddedPostgresUrl } from './db/embedded.js';
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
    // npm start runs admin commands against this database: told where it is, they never start a
    // Postgres of their own on the same folder (as one did when npm start died as it ran one).
    void tellParentReady({ databaseUrl: config.databaseUrl ?? embeddedPostgresUrl(config.dataDir, config.embeddedPostgresPort) });
  },
  (err) => {
    log.error('coordinator failed to start', { err });
    process.exit(1);
  },
);
