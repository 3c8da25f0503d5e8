import test from 'ava';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { API_KEY_CACHE_MS, issueApiKey, revokeApiKey } from '../coordinator/src/tenancy/tenancy.js';

// API keys are looked up once per API_KEY_CACHE_MS, not on every request; revocation still holds.

let cluster: TestCluster;
test.before(async () => {
  cluster = await startCluster('api_key_cache');
});
test.after.always(() => cluster?.close());

const status = async (key: string) => (await cluster.api('GET', '/api/jobs', { key })).status;

test.serial('a key revoked through this coordinator is refused on the very next request', async (t) => {
  const { org } = await cluster.org();
  const k = await issueApiKey(cluster.app.db, org.id, 'soon revoked');
  t.is(await status(k.key), 200);
  t.is(await status(k.key), 200); // now served from the cache
  await revokeApiKey(cluster.app.db, k.id);
  t.is(await status(k.key), 401);
});

test.serial('a key revoked by another process (admin CLI, another coordinator) is refused once the cache time has passed', async (t) => {
  const { org } = await cluster.org();
  const k = await issueApiKey(cluster.app.db, org.id, 'revoked elsewhere');
  t.is(await status(k.key), 200);
  // What the admin CLI does: an UPDATE this coordinator does not see.
  await cluster.app.db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [k.id]);
  const revokedAt = Date.now();
  await waitFor(async () => (await status(k.key)) === 401, API_KEY_CACHE_MS + 5_000, 'revocation seen');
  t.true(Date.now() - revokedAt <= API_KEY_CACHE_MS + 5_000);
});

test.serial('an unknown key is never remembered: a key issued after a failed try works at once', async (t) => {
  t.is(await status('vsk_not-a-real-key'), 401);
  const { org } = await cluster.org();
  const k = await issueApiKey(cluster.app.db, org.id, 'fresh');
  t.is(await status(k.key), 200);
});
