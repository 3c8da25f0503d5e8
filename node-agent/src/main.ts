import { createLogger } from '../../common/src/logger.js';
import { stopOnSignals } from '../../common/src/shutdown.js';
import { loadAgentConfig } from './config.js';
import { Agent } from './agent.js';

let config: ReturnType<typeof loadAgentConfig>;
try {
  config = loadAgentConfig();
} catch (err) {
  createLogger({ service: 'node-agent' }).error('invalid configuration', { message: (err as Error).message });
  process.exit(1);
}
const log = createLogger({ service: 'node-agent', agent: config.name }, config.logLevel);
const agent = new Agent(config, log);
stopOnSignals(log, () => agent.stop());

agent.start().catch((err) => {
  log.error('agent failed to start', { err });
  process.exit(1);
});
