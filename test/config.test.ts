import test from 'ava';
import { loadConfig } from '../coordinator/src/config.js';
import { loadAgentConfig } from '../node-agent/src/config.js';

// Each process reads its configuration once, at start, into one frozen object that is passed down.

test('the coordinator config carries social posting, read with the rest and frozen all the way down', (t) => {
  const config = loadConfig({ grpcHost: '127.0.0.1' }, {
    SOCIAL_PROVIDER: 'ayrshare', SOCIAL_API_KEY: 'k', SOCIAL_AYRSHARE_DOMAIN: 'acme', SOCIAL_AYRSHARE_PRIVATE_KEY: 'pem', LOG_LEVEL: 'warn',
  });
  t.like(config.social, { provider: 'ayrshare', apiKey: 'k', domain: 'acme' });
  t.is(config.logLevel, 'warn');
  t.true(Object.isFrozen(config) && Object.isFrozen(config.social));
  t.throws(() => loadConfig({ grpcHost: '127.0.0.1' }, { SOCIAL_PROVIDER: 'ayrshare' }), { message: /SOCIAL_API_KEY is required/ });
  t.is(loadConfig({ grpcHost: '127.0.0.1' }, {}).social.provider, 'local');
});

test('the agent config carries the transcriber and highlight-model settings, frozen', (t) => {
  const env = {
    CLUSTER_TOKEN: 'a-cluster-token-0123456789', TRANSCRIBE_API_URL: 'http://127.0.0.1:9', TRANSCRIBE_CONCURRENCY: '3',
    HIGHLIGHT_API_URL: 'http://127.0.0.1:8', HIGHLIGHT_API_MODEL: 'm',
  };
  const config = loadAgentConfig(env);
  t.like(config.transcriber, { apiUrl: 'http://127.0.0.1:9', concurrency: 3 });
  t.deepEqual(config.highlightApi, { url: 'http://127.0.0.1:8', model: 'm', apiKey: undefined });
  t.true(Object.isFrozen(config) && Object.isFrozen(config.transcriber) && Object.isFrozen(config.highlightApi));
  t.is(loadAgentConfig({ CLUSTER_TOKEN: env.CLUSTER_TOKEN }).highlightApi, null);
});
