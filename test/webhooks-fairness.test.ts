import test from 'ava';
import { sleep } from '@shorts/common/retry';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { serveFiles, type MediaServer } from './helpers/media.js';
import { makeTalkVideo } from './helpers/talk-video.js';
import { startReceiverProcess } from './helpers/webhook-receiver.js';
import { fliteAvailable } from './transcribe-synth.js';

// Issue 36: one tenant's receiver must not stall every other tenant's webhooks. Real Postgres, a real
// agent, a receiver in its own process, the default 10 s attempt limit and the default pool (16 slots,
// 4 an organization).

let cluster: TestCluster;
let media: MediaServer;
let receiver: Awaited<ReturnType<typeof startReceiverProcess>>;

test.before(async () => {
  if (!fliteAvailable()) throw new Error('flite is required (apt-get install flite)');
  cluster = await startCluster('webhooks_fairness');
  const talk = await makeTalkVideo(cluster.dataDir);
  media = await serveFiles({ 'talk.mp4': talk.videoPath });
  receiver = await startReceiverProcess();
  await cluster.startAgent();
});

test.after.always(async () => {
  await receiver?.close();
  await media?.close();
  await cluster?.close();
});

test('a tenant whose receiver stalls every request does not delay another tenant: its webhook comes within 2 s', async (t) => {
  // Tenant A: 20 jobs that fail at once (their source is missing), each event held 10 s by its
  // receiver, then retried: 200 s of attempts queued ahead of anything else.
  const slow = await cluster.org({ plan: 'pro', credits: 1000 });
  let failing = 0;
  const failOne = async () => {
    const r = await cluster.api('POST', '/api/jobs', {
      key: slow.key,
      body: { functionName: 'VideoShorts', fileUrl: media.url(`missing-${failing++}.mp4`), webhook: receiver.url('/stall?ms=10000') },
    });
    t.is(r.status, 201, JSON.stringify(r.body));
    return r.body.id as string;
  };
  const stalled = [];
  for (let i = 0; i < 20; i++) stalled.push(await failOne());
  for (const id of stalled) t.is((await cluster.settledJob(slow.key, id)).status, 'FAILED');
  await waitFor(async () => receiver.requests.some((r) => r.path === '/stall'), 30_000, 'the first stalled delivery');

  // However long B's job takes on a loaded machine, A's queue must not run dry before B's webhook
  // goes out (its retries wait a minute and more; in a gap there is nothing to be unfair with): A
  // fails another job every 2 s, more events than its 4 slots of 10 s can deliver.
  let feeding = true;
  const feeder = (async () => {
    while (feeding) {
      await failOne();
      await sleep(2000);
    }
  })();
  const hook = await (async () => {
    try {
      // Tenant B: a real job that completes while A's events still hold their share.
      const other = await cluster.org({ plan: 'pro', credits: 100 });
      const created = await cluster.api('POST', '/api/jobs', {
        key: other.key,
        body: { functionName: 'VideoShorts', fileUrl: media.url('talk.mp4'), webhook: receiver.url('/ok') },
      });
      t.is(created.status, 201);
      const job = await cluster.settledJob(other.key, created.body.id, { timeoutMs: 300_000 });
      t.is(job.status, 'COMPLETED', job.message);
      const received = await waitFor(async () => receiver.requests.find((r) => r.path === '/ok'), 60_000, "B's webhook");
      const completed = await cluster.app.db.one<{ at: Date }>('SELECT completed_at AS at FROM jobs WHERE id = $1', [created.body.id]);
      const lateMs = received.at - completed!.at.getTime();
      t.true(lateMs < 2000, `B's webhook arrived ${lateMs} ms after its job completed`);
      t.regex(received.body, new RegExp(created.body.id as string));
      // A claim a moment after B's delivery still shows A's slots busy around it.
      await sleep(1000);
      return received;
    } finally {
      feeding = false;
      await feeder;
    }
  })();

  // A was stalling when B's event went out (each attempt held until the 10 s limit cuts it, a freed
  // slot claimed again at once), and never held more than its share of 4.
  const stalls = receiver.requests.filter((r) => r.path === '/stall');
  t.true(
    stalls.some((r) => r.at > hook.at - 10_000 && r.at <= hook.at + 1000),
    'some of A’s deliveries were held open around B’s',
  );
  t.true(Math.max(...stalls.map((r) => r.open)) <= 4, `A held ${Math.max(...stalls.map((r) => r.open))} requests open at once`);
});
