import test from 'ava';
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { FakeAgent } from './helpers/fake-agent.js';
import { createUser } from '../coordinator/src/tenancy/tenancy.js';
import { startWebhookReceiver, type ReceivedHook } from './helpers/webhook-receiver.js';

// Standard Webhooks (issue 37), through the public API: a job fails on a fake agent, its webhook
// goes to a receiver this test starts, and the receiver checks it with the standardwebhooks library.

let cluster: TestCluster;
let agent: FakeAgent;

test.before(async () => {
  // A 1 s first retry keeps a failed attempt's retry within the test.
  cluster = await startCluster('webhooks_standard', { webhookRetryDelaySec: 1 });
  agent = await new FakeAgent(cluster.app.grpcAddress, undefined, 'hooks').register(['analyze-video']);
});
test.after.always(async () => {
  agent?.close();
  await cluster?.close();
});

type Receiver = Awaited<ReturnType<typeof startWebhookReceiver>>;

/** A job of `key`'s organization that the agent fails at once: its job.failed event goes to `url`. */
async function failedJob(key: string, url: string): Promise<string> {
  const created = await cluster.api('POST', '/api/jobs', {
    key,
    body: { functionName: 'VideoShorts', fileUrl: 'https://example.com/talk.mp4', webhook: url },
  });
  if (created.status !== 201) throw new Error(`job not created: ${JSON.stringify(created.body)}`);
  const task = await waitFor(() => agent.lease(2000), 30_000, 'the analysis task');
  await agent.fail(task.task_id, task.lease_token, 'the source is gone', false);
  return created.body.id as string;
}

const hooksOf = (receiver: Receiver, n: number) =>
  waitFor(async () => (receiver.received.length >= n ? receiver.received.slice(0, n) : undefined), 30_000, `${n} webhook requests`);

const verify = (secret: string, hook: ReceivedHook) => new Webhook(secret).verify(hook.body, hook.headers as Record<string, string>);

const secretOf = async (key: string) => {
  const r = await cluster.api('GET', '/api/webhooks/secret', { key });
  if (r.status !== 200) throw new Error(`secret: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as {
    secret: string;
    standardSecret: string;
    createdAt: string | null;
    previous: null | { secret: string; expiresAt: string };
  };
};

const deliveries = async (key: string, jobId: string) => {
  const r = await cluster.api('GET', `/api/jobs/${jobId}/webhook-deliveries`, { key });
  if (r.status !== 200) throw new Error(`deliveries: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.deliveries as Array<{
    id: string;
    webhookId: string;
    attempt: number;
    status: string;
    responseCode: number | null;
    redelivery: boolean;
    createdAt: string;
  }>;
};

/** The deliveries list once it holds an attempt: an attempt is recorded when the receiver's answer
 *  is in, a moment after the receiver has the request. */
const recordedDeliveries = (key: string, jobId: string, what: string) =>
  waitFor(
    async () => {
      const list = await deliveries(key, jobId);
      return list.length ? list : undefined;
    },
    30_000,
    what,
  );

test.serial('a delivery verifies with the standardwebhooks library, and still carries X-Signature', async (t) => {
  const { key } = await cluster.org();
  const receiver = await startWebhookReceiver();
  try {
    const jobId = await failedJob(key, receiver.url());
    const [hook] = await hooksOf(receiver, 1);
    const { secret, standardSecret } = await secretOf(key);
    t.regex(secret, /^whsec_[A-Za-z0-9+/]{32}$/, 'a new secret is standard base64 after the prefix');
    t.is(standardSecret, secret);
    const payload = verify(secret, hook!) as { event: string; jobId: string };
    t.like(payload, { event: 'job.failed', jobId });
    t.regex(String(hook!.headers['webhook-id']), /^msg_[0-9a-f]{32}$/);
    t.regex(String(hook!.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+=*$/, 'one signature while no secret was rotated');
    // A body changed in transit, or another secret, fails.
    t.throws(() => verify(secret, { ...hook!, body: hook!.body.replace('job.failed', 'job.complete') }));
    t.throws(() => verify('whsec_' + Buffer.alloc(24, 7).toString('base64'), hook!));
    // The old header, unchanged: HMAC of "t.body" keyed by the secret's whole text.
    const [, ts, mac] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(hook!.headers['x-signature']))!;
    t.is(mac, createHmac('sha256', secret).update(`${ts}.${hook!.body}`).digest('hex'));
    t.is(ts, String(hook!.headers['webhook-timestamp']));
  } finally {
    await receiver.close();
  }
});

test.serial('a secret made before Standard Webhooks (base64url) still verifies through its standardSecret', async (t) => {
  const { org, key } = await cluster.org();
  // As createOrganization made them before: whsec_ and 24 bytes in base64url, here with both - and _.
  const legacy = 'whsec_' + Buffer.from([0xfb, 0xff, 0xbf, ...Array(21).fill(0xfe)]).toString('base64url');
  t.regex(legacy, /[-_]/);
  await cluster.app.db.query('UPDATE organizations SET webhook_secret = $2, webhook_secret_created_at = NULL WHERE id = $1', [
    org.id,
    legacy,
  ]);
  const receiver = await startWebhookReceiver();
  try {
    await failedJob(key, receiver.url());
    const [hook] = await hooksOf(receiver, 1);
    const got = await secretOf(key);
    t.is(got.secret, legacy, 'X-Signature keeps its key');
    t.is(got.standardSecret, 'whsec_' + Buffer.from(legacy.slice(6), 'base64url').toString('base64'));
    t.like(verify(got.standardSecret, hook!), { event: 'job.failed' });
    const [, ts, mac] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(hook!.headers['x-signature']))!;
    t.is(mac, createHmac('sha256', legacy).update(`${ts}.${hook!.body}`).digest('hex'));
  } finally {
    await receiver.close();
  }
});

test.serial('webhook-id stays the same across a retry, and the deliveries list shows both attempts', async (t) => {
  const { key } = await cluster.org();
  const receiver = await startWebhookReceiver(1);
  try {
    const jobId = await failedJob(key, receiver.url());
    const [first, second] = await hooksOf(receiver, 2);
    t.is(first!.status, 500);
    t.is(second!.status, 200);
    t.truthy(first!.headers['webhook-id']);
    t.is(second!.headers['webhook-id'], first!.headers['webhook-id']);
    t.is(second!.body, first!.body);
    const { secret } = await secretOf(key);
    t.like(verify(secret, first!), { jobId });
    t.like(verify(secret, second!), { jobId });
    const list = await waitFor(
      async () => ((await deliveries(key, jobId)).length >= 2 ? deliveries(key, jobId) : undefined),
      30_000,
      'two attempts',
    );
    t.deepEqual(
      list.map((d) => [d.attempt, d.status, d.responseCode, d.webhookId, d.redelivery]),
      [
        [1, 'failed', 500, first!.headers['webhook-id'], false],
        [2, 'delivered', 200, first!.headers['webhook-id'], false],
      ],
    );
    t.true(list.every((d) => !Number.isNaN(Date.parse(d.createdAt))));
  } finally {
    await receiver.close();
  }
});

test.serial('after a rotation both the new and the old secret verify, for 24 hours', async (t) => {
  const { key } = await cluster.org();
  const before = await secretOf(key);
  t.is(before.previous, null);
  const rotated = await cluster.api('POST', '/api/webhooks/secret/rotate', { key, body: {} });
  t.is(rotated.status, 200, JSON.stringify(rotated.body));
  const { secret, previous } = rotated.body;
  t.not(secret, before.secret);
  t.regex(secret, /^whsec_[A-Za-z0-9+/]{32}$/);
  t.is(previous.secret, before.secret);
  const hoursLeft = (Date.parse(previous.expiresAt) - Date.now()) / 3600_000;
  t.true(hoursLeft > 23.9 && hoursLeft <= 24, `old secret expires in ${hoursLeft} h`);
  t.deepEqual(await secretOf(key), rotated.body, 'GET reads what the rotation made');

  const receiver = await startWebhookReceiver();
  try {
    const jobId = await failedJob(key, receiver.url());
    const [hook] = await hooksOf(receiver, 1);
    t.is(String(hook!.headers['webhook-signature']).split(' ').length, 2);
    t.like(verify(secret, hook!), { jobId }, 'the new secret verifies');
    t.like(verify(before.secret, hook!), { jobId }, 'the old secret verifies during the overlap');
    const [, ts, mac] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(hook!.headers['x-signature']))!;
    t.is(mac, createHmac('sha256', secret).update(`${ts}.${hook!.body}`).digest('hex'), 'X-Signature uses the new secret');

    // Once the overlap is over the old secret no longer signs.
    await cluster.app.db.query(
      `UPDATE organizations SET previous_webhook_secret_expires_at = now() - interval '1 second' WHERE webhook_secret = $1`,
      [secret],
    );
    t.is((await secretOf(key)).previous, null);
    const [first] = await recordedDeliveries(key, jobId, 'the first attempt recorded');
    const again = await cluster.api('POST', `/api/jobs/${jobId}/webhook-deliveries/${first!.id}/redeliver`, { key, body: {} });
    t.is(again.status, 202, JSON.stringify(again.body));
    const [, later] = await hooksOf(receiver, 2);
    t.is(String(later!.headers['webhook-signature']).split(' ').length, 1);
    t.like(verify(secret, later!), { jobId });
    t.throws(() => verify(before.secret, later!));
  } finally {
    await receiver.close();
  }
});

test.serial('a redelivered event arrives again with the same webhook-id and shows in the deliveries list', async (t) => {
  const { key } = await cluster.org();
  const receiver = await startWebhookReceiver();
  try {
    const jobId = await failedJob(key, receiver.url());
    const [first] = await hooksOf(receiver, 1);
    const [delivered] = await recordedDeliveries(key, jobId, 'the first attempt');
    t.like(delivered, { attempt: 1, status: 'delivered', responseCode: 200, redelivery: false });

    const r = await cluster.api('POST', `/api/jobs/${jobId}/webhook-deliveries/${delivered!.id}/redeliver`, { key, body: {} });
    t.is(r.status, 202, JSON.stringify(r.body));
    t.deepEqual(r.body, { queued: true, webhookId: first!.headers['webhook-id'], attempt: 2 });
    const [, second] = await hooksOf(receiver, 2);
    t.is(second!.headers['webhook-id'], first!.headers['webhook-id']);
    t.is(second!.body, first!.body);
    t.is(second!.headers['x-webhook-attempt'], '2');
    t.like(verify((await secretOf(key)).secret, second!), { event: 'job.failed', jobId });
    const list = await waitFor(
      async () => {
        const l = await deliveries(key, jobId);
        return l.length >= 2 ? l : undefined;
      },
      30_000,
      'the redelivery in the list',
    );
    t.like(list[1], { attempt: 2, status: 'delivered', responseCode: 200, redelivery: true, webhookId: first!.headers['webhook-id'] });

    const missing = await cluster.api('POST', `/api/jobs/${jobId}/webhook-deliveries/999999999/redeliver`, { key, body: {} });
    t.is(missing.status, 404);
  } finally {
    await receiver.close();
  }
});

test.serial("another organization can read neither this one's secret nor its deliveries", async (t) => {
  const a = await cluster.org({ name: 'A' });
  const b = await cluster.org({ name: 'B' });
  const receiver = await startWebhookReceiver();
  try {
    const jobId = await failedJob(a.key, receiver.url());
    await hooksOf(receiver, 1);
    const [delivery] = await recordedDeliveries(a.key, jobId, 'the attempt');

    const secretA = await secretOf(a.key);
    const secretB = await secretOf(b.key);
    t.not(secretB.secret, secretA.secret, "B's key reads B's own secret");
    const named = await cluster.api('GET', `/api/webhooks/secret?organizationId=${a.org.id}`, { key: b.key });
    t.is(named.status, 403, "naming A's organization with B's key is refused");
    t.false(JSON.stringify(named.body).includes(secretA.secret));
    const rotate = await cluster.api('POST', '/api/webhooks/secret/rotate', { key: b.key, body: { organizationId: a.org.id } });
    t.is(rotate.status, 403);
    t.is((await secretOf(a.key)).secret, secretA.secret, "A's secret is unchanged");

    const list = await cluster.api('GET', `/api/jobs/${jobId}/webhook-deliveries`, { key: b.key });
    t.is(list.status, 404);
    t.false(JSON.stringify(list.body).includes(delivery!.webhookId));
    const redeliver = await cluster.api('POST', `/api/jobs/${jobId}/webhook-deliveries/${delivery!.id}/redeliver`, {
      key: b.key,
      body: {},
    });
    t.is(redeliver.status, 404);
    await new Promise((r) => setTimeout(r, 1500));
    t.is(receiver.received.length, 1, 'nothing was sent again');
    t.is((await cluster.api('GET', '/api/webhooks/secret')).status, 401);

    // A signed-in member reads its own organization's, naming it; another organization's stays closed.
    const userB = await createUser(cluster.app.db, { email: `hooks-${b.org.id}@example.com`, organizationId: b.org.id });
    const bearerB = { authorization: `Bearer ${await cluster.app.signer.issue(userB.id)}` };
    const own = await cluster.api('GET', `/api/webhooks/secret?organizationId=${b.org.id}`, { headers: bearerB });
    t.is(own.body.secret, secretB.secret);
    const other = await cluster.api('GET', `/api/webhooks/secret?organizationId=${a.org.id}`, { headers: bearerB });
    t.true([403, 404].includes(other.status), String(other.status));
    t.false(JSON.stringify(other.body).includes(secretA.secret));
    const otherList = await cluster.api('GET', `/api/jobs/${jobId}/webhook-deliveries?organizationId=${b.org.id}`, { headers: bearerB });
    t.is(otherList.status, 404);
  } finally {
    await receiver.close();
  }
});

test('the OpenAPI document describes the event, its headers and the webhook routes', async (t) => {
  const doc = (await cluster.api('GET', '/openapi.json')).body;
  for (const name of ['jobCompleted', 'jobFailed']) {
    const op = doc.webhooks?.[name]?.post;
    t.truthy(op, `webhooks.${name}`);
    const headers = (op.parameters as Array<{ name: string; in: string }>).filter((p) => p.in === 'header').map((p) => p.name);
    for (const h of ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'X-Signature']) t.true(headers.includes(h), `${name}: ${h}`);
    const body = op.requestBody.content['application/json'];
    t.deepEqual(body.schema.required.sort(), ['data', 'event', 'jobId', 'status']);
    t.deepEqual(body.schema.properties.event.enum, ['job.completed', 'job.failed']);
  }
  t.truthy(doc.paths['/api/webhooks/secret'].get);
  t.truthy(doc.paths['/api/webhooks/secret/rotate'].post);
  t.truthy(doc.paths['/api/jobs/{jobId}/webhook-deliveries'].get);
  t.is(
    doc.paths['/api/jobs/{jobId}/webhook-deliveries/{deliveryId}/redeliver'].post.responses['202'].content['application/json'].example
      .queued,
    true,
  );
});

test.serial('a deleted job takes its kept events with it: its deliveries are 404 and nothing is left to redeliver', async (t) => {
  const { org, key } = await cluster.org();
  const receiver = await startWebhookReceiver();
  try {
    const jobId = await failedJob(key, receiver.url());
    await hooksOf(receiver, 1);
    const [delivery] = await recordedDeliveries(key, jobId, 'the attempt');
    const kept = () => cluster.app.db.query('SELECT 1 FROM webhook_messages WHERE organization_id = $1 AND job_id = $2', [org.id, jobId]);
    t.is((await kept()).length, 1);
    t.is((await cluster.api('DELETE', `/api/jobs/${jobId}`, { key })).status, 200);
    t.is((await kept()).length, 0, "the event's body (the job's content) went with the job");
    t.is((await cluster.api('GET', `/api/jobs/${jobId}/webhook-deliveries`, { key })).status, 404);
    t.is((await cluster.api('POST', `/api/jobs/${jobId}/webhook-deliveries/${delivery!.id}/redeliver`, { key, body: {} })).status, 404);
  } finally {
    await receiver.close();
  }
});
