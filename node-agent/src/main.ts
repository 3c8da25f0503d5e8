import { createLogger } from '../../common/src/logger.js';
import { loadAgentConfig } from './config.js';
import { Agent } from './agent.js';

const config = loadAgentConfig();
const log = createLogger({ service: 'node-agent', agent: config.name }, config.logLevel);
const agent = new Agent(config, log);

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    log.info('stopping', { signal });
    agent.stop().then(() => process.exit(0), () => process.exit(1));
  });
}

agent.start().catch((err) => {
  log.error('agent failed to start', { err });
  process.exit(1);
});
