import { createLogger } from '@shorts/common/logger';
import { exitStartFailed, stopOnSignals, tellParentReady } from '@shorts/common/shutdown';
import { loadAgentConfig } from './config.js';
import { Agent } from './agent.js';

let config: ReturnType<typeof loadAgentConfig>;
try {
  config = loadAgentConfig();
} catch (err) {
  createLogger({ service: 'node-agent' }).error('invalid configuration', { message: (err as Error).message });
  exitStartFailed(`invalid configuration: ${(err as Error).message}`);
}
const log = createLogger({ service: 'node-agent', agent: config.name }, config.logLevel);
const agent = new Agent(config, log);
stopOnSignals(log, () => agent.stop());

agent.start(tellParentReady).catch((err) => {
  log.error('agent failed to start', { err });
  exitStartFailed(`agent failed to start: ${err?.message ?? String(err)}`);
});
