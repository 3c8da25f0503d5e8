import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { enqueueWebhook, classifyAttempt, parseRetryAfter, retryDelaySec } from '../coordinator/src/webhooks/webhooks.js';
import { FetchRefusedError } from '@shorts/common/net/safe-fetch';
import { startReceiverProcess } from './helpers/webhook-receiver.js';

// The webhook worker of a real coordinator (no agents) against local receivers that misbehave the
// way real ones do: not listening, too slow, overloaded.

let cluster: TestCluster;

test.before(async () => {
  // A 1 s first retry and a 300 ms attempt limit keep three attempts within a few seconds.
  cluster = await startCluster('webhooks_retry', { webhookRetryDelaySec: 1, webhookTimeoutMs: 300 });
});

test.after.always(async () => {
  await cluster?.close();
});

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, nth: number) => void;

/** A receiver counting requests; `handle` decides how the nth (1-based) request is answered. */
function receiver(handle: Handler) {
  const answered: number[] = [];
  let seen = 0;
  const server = http.createServer((req, res) => {
    const nth = ++seen;
    req.resume();
    req.on('end', () => {
      res.on('finish', () => answered.push(res.statusCode));
      handle(req, res, nth);
    });
  });
  return {
    answered,
    listen: (port = 0) => new Promise<number>((r) => server.listen(port, '127.0.0.1', () => r((server.address() as AddressInfo).port))),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function sendEvent(url: string) {
  const { org } = await cluster.org();
  const jobId = `hook-${Math.random().toString(36).slice(2)}`;
  await cluster.app.db.tx((c) =>
    enqueueWebhook(cluster.app.boss, c, { organizationId: org.id, jobId, url, event: 'job.completed', body: JSON.stringify({ jobId }) }),
  );
  return jobId;
}

const attempts = (jobId: string) =>
  cluster.app.db.query<{ attempt: number; code: number | null; delivered: boolean; error: string | null; at: Date }>(
    'SELECT attempt, status_code AS code, delivered, error, created_at AS at FROM webhook_deliveries WHERE job_id = $1 ORDER BY attempt',
    [jobId],
  );

/** Waits for the delivered row itself (not the receiver's answer, which comes before it is written). */
const deliveredAttempts = (jobId: string) =>
  waitFor(
    async () => {
      const rows = await attempts(jobId);
      return rows.some((r) => r.delivered) ? rows : undefined;
    },
    60_000,
    `delivery of ${jobId}`,
  );

/** Nothing more is queued for this event: no retry can still arrive. */
const pendingRetries = async (jobId: string) =>
  (
    await cluster.app.db.query(`SELECT 1 FROM pgboss.job WHERE name = 'webhook-delivery' AND data->>'jobId' = $1 AND state < 'completed'`, [
      jobId,
    ])
  ).length;

test.serial('a receiver that is down for two attempts gets exactly one delivery on the third', async (t) => {
  // Learn a free port, then leave nothing listening on it: connections are refused.
  const probe = receiver(() => undefined);
  const port = await probe.listen();
  await probe.close();
  const jobId = await sendEvent(`http://127.0.0.1:${port}/hook`);

  await waitFor(async () => (await attempts(jobId)).length >= 2, 60_000, 'two refused attempts');
  const hooks = receiver((_req, res) => res.writeHead(200).end());
  await hooks.listen(port);
  try {
    const rows = await deliveredAttempts(jobId);
    t.deepEqual(
      rows.map((r) => [r.attempt, r.code, r.delivered]),
      [
        [1, null, false],
        [2, null, false],
        [3, 200, true],
      ],
    );
    t.regex(rows[0]!.error!, /ECONNREFUSED/);
    t.deepEqual(hooks.answered, [200]);
    t.is(await pendingRetries(jobId), 0);
  } finally {
    await hooks.close();
  }
});

test.serial('a receiver that times out twice gets exactly one delivery on the third attempt', async (t) => {
  const hooks = receiver((_req, res, nth) => {
    if (nth > 2) res.writeHead(200).end();
    // The first two are never answered; the coordinator gives up on them after its 300 ms limit.
  });
  const port = await hooks.listen();
  try {
    const jobId = await sendEvent(`http://127.0.0.1:${port}/hook`);
    const rows = await deliveredAttempts(jobId);
    t.deepEqual(
      rows.map((r) => [r.attempt, r.code, r.delivered]),
      [
        [1, null, false],
        [2, null, false],
        [3, 200, true],
      ],
    );
    t.regex(rows[0]!.error!, /timed out/);
    t.deepEqual(hooks.answered, [200]);
    t.is(await pendingRetries(jobId), 0);
  } finally {
    await hooks.close();
  }
});

test.serial('a 429 with Retry-After is retried no sooner than the receiver asked', async (t) => {
  const hooks = receiver((_req, res, nth) => {
    if (nth === 1) res.writeHead(429, { 'retry-after': '3' }).end();
    else res.writeHead(200).end();
  });
  const port = await hooks.listen();
  try {
    const jobId = await sendEvent(`http://127.0.0.1:${port}/hook`);
    const rows = await deliveredAttempts(jobId);
    t.deepEqual(
      rows.map((r) => [r.attempt, r.code, r.delivered]),
      [
        [1, 429, false],
        [2, 200, true],
      ],
    );
    // The backoff alone would have waited at most 2 s (1 s base, +25 % jitter, rounded up).
    const waitedMs = new Date(rows[1].at).getTime() - new Date(rows[0].at).getTime();
    t.true(waitedMs >= 2900, `second attempt ${waitedMs} ms after the first`);
    t.deepEqual(hooks.answered, [429, 200]);
  } finally {
    await hooks.close();
  }
});

test.serial('a 2xx with a body far over 64 KB is one delivery, not a retry', async (t) => {
  const hooks = await startReceiverProcess();
  try {
    const jobId = await sendEvent(hooks.url('/big?kb=1024'));
    const rows = await deliveredAttempts(jobId);
    t.deepEqual(
      rows.map((r) => [r.attempt, r.code, r.delivered]),
      [[1, 200, true]],
    );
    t.is(await pendingRetries(jobId), 0);
    t.is(hooks.requests.length, 1);
  } finally {
    await hooks.close();
  }
});

for (const status of [301, 302, 307]) {
  test.serial(`a ${status} is not followed: a failed attempt naming the Location, not retried`, async (t) => {
    const hooks = await startReceiverProcess();
    try {
      const target = hooks.url('/ok');
      const jobId = await sendEvent(hooks.url(`/redirect?status=${status}&to=${encodeURIComponent(target)}`));
      const [row] = await waitFor(
        async () => {
          const rows = await cluster.app.db.query<{ attempt: number; code: number; delivered: boolean; error: string; location: string }>(
            'SELECT attempt, status_code AS code, delivered, error, redirect_location AS location FROM webhook_deliveries WHERE job_id = $1',
            [jobId],
          );
          return rows.length ? rows : undefined;
        },
        30_000,
        'the attempt',
      );
      t.like(row, { attempt: 1, code: status, delivered: false, location: target });
      t.regex(row!.error, /do not follow redirects/);
      t.is(await pendingRetries(jobId), 0);
      // Wait past the first retry's time: nothing more is recorded and the target never saw a request.
      await new Promise((r) => setTimeout(r, 2500));
      t.is((await attempts(jobId)).length, 1);
      t.deepEqual(
        hooks.requests.map((r) => [r.method, r.path]),
        [['POST', '/redirect']],
      );
    } finally {
      await hooks.close();
    }
  });
}

test('what an attempt means is decided on the refusal code and the status, not the message', (t) => {
  const refused = (code: ConstructorParameters<typeof FetchRefusedError>[0]) =>
    classifyAttempt({ error: new FetchRefusedError(code, 'whatever the wording') });
  t.like(refused('blocked_host'), { delivered: false, retry: false });
  t.like(refused('invalid_url'), { delivered: false, retry: false });
  t.like(refused('timeout'), { delivered: false, retry: true });
  t.like(refused('network'), { delivered: false, retry: true });
  const answered = (status: number, headers = {}) => classifyAttempt({ response: { status, headers } });
  t.like(answered(204), { delivered: true, statusCode: 204 });
  t.like(answered(302, { location: 'https://example.com/new' }), { delivered: false, retry: false, location: 'https://example.com/new' });
  t.like(answered(500), { delivered: false, retry: true, statusCode: 500 });
  t.like(answered(503, { 'retry-after': '120' }), { retry: true, retryAfterSec: 120 });
  t.like(answered(429, { 'retry-after': new Date(Date.now() + 60_000).toUTCString() }), { retry: true });
  t.is(parseRetryAfter('soon'), undefined);
  t.is(parseRetryAfter('99999999'), 6 * 3600);
  // Backoff doubles per failed attempt, within ±25 %, and never undercuts Retry-After.
  t.is(
    retryDelaySec(1, 60, undefined, () => 0.5),
    60,
  );
  t.is(
    retryDelaySec(3, 60, undefined, () => 0.5),
    240,
  );
  t.is(
    retryDelaySec(3, 60, undefined, () => 0),
    180,
  );
  t.is(
    retryDelaySec(3, 60, undefined, () => 1),
    300,
  );
  t.is(
    retryDelaySec(1, 60, 600, () => 0.5),
    600,
  );
});
