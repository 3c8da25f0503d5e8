import test from 'ava';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { FakeAgent, type LeasedTask } from './helpers/fake-agent.js';
import { leaseRender } from './helpers/render-lease.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { startWebhookReceiver } from './helpers/webhook-receiver.js';
import { createUser } from '../coordinator/src/tenancy/tenancy.js';
import { makeTestVideo, serveFiles } from './helpers/media.js';
import { havePocketsphinx, needing } from './helpers/requirements.js';

// Cancel (issue 37 item 5) through the public API: first against an agent speaking the real protocol
// that reacts to a cancel request as node-agent does (agent.ts: a progress answer with
// cancel_requested stops the work and fails the task with code CANCELLED), then against a real agent
// process in the middle of a download.

const JOB_CANCELLED = 'Cancelled';
const RENDER_CANCELLED = 'Cancelled';

let cluster: TestCluster;
let agent: FakeAgent;

test.before(async () => {
  cluster = await startCluster('jobs_cancel');
  agent = await new FakeAgent(cluster.app.grpcAddress, undefined, 'cancel').register(['analyze-video', 'render-short']);
});
test.after.always(async () => {
  agent?.close();
  await cluster?.close();
});

/** What node-agent does on a progress answer that asks it to stop. */
async function stopAsTheAgentDoes(task: LeasedTask): Promise<boolean> {
  const res = await agent.progress(task.task_id, task.lease_token, 0.3, 'downloading');
  if (!res.cancel_requested) return false;
  await agent.client.call(
    'FailTask',
    { task_id: task.task_id, lease_token: task.lease_token, message: 'Cancelled', retryable: false, code: 'CANCELLED' },
    { retryForMs: 0 },
  );
  return true;
}

const orgCredits = async (id: string) => {
  const row = await cluster.app.db.one<{ credits: string; reserved: string }>(
    'SELECT credits, reserved_credits AS reserved FROM organizations WHERE id = $1',
    [id],
  );
  return { credits: Number(row!.credits), reserved: Number(row!.reserved) };
};

test.serial('a running job cancelled: its agent is told to stop, its credits come back, its webhook says so', async (t) => {
  const { org, key } = await cluster.org({ plan: 'pro', credits: 10 });
  const receiver = await startWebhookReceiver();
  try {
    const created = await cluster.api('POST', '/api/jobs', {
      key,
      body: { functionName: 'VideoShorts', fileUrl: 'https://example.com/talk.mp4', webhook: receiver.url() },
    });
    t.is(created.status, 201);
    const jobId = created.body.id as string;
    t.true((await orgCredits(org.id)).reserved > 0, 'credits are reserved while it runs');
    const task = (await agent.lease(3000))!;
    t.is(task.type, 'analyze-video');
    t.false(await stopAsTheAgentDoes(task), 'no cancel asked yet: the work goes on');

    const cancelled = await cluster.api('POST', `/api/jobs/${jobId}/cancel`, { key, body: {} });
    t.is(cancelled.status, 202, JSON.stringify(cancelled.body));
    t.deepEqual(cancelled.body, { id: jobId, jobId, status: 'PROCESSING' });
    t.true(await stopAsTheAgentDoes(task), "the agent's next progress report tells it to stop");

    const job = await cluster.api('GET', `/api/jobs/${jobId}`, { key });
    t.like(job.body, { status: 'FAILED', message: JOB_CANCELLED });
    const user = await createUser(cluster.app.db, { email: `cancel-${org.id}@example.com`, organizationId: org.id });
    const bearer = await cluster.api('GET', `/api/jobs/${jobId}?organizationId=${org.id}`, {
      headers: { authorization: `Bearer ${await cluster.app.signer.issue(user.id)}` },
    });
    t.like(bearer.body, { status: 'FAILED', message: JOB_CANCELLED });
    const listed = (await cluster.api('GET', '/api/jobs?status=FAILED', { key })).body.data.find((j: { id: string }) => j.id === jobId);
    t.like(listed, { status: 'FAILED', message: JOB_CANCELLED, creditUsageStatus: 'RELEASED', cost: null });
    t.deepEqual(await orgCredits(org.id), { credits: 10, reserved: 0 }, 'the reserved credits are released, nothing charged');
    t.is((await cluster.app.db.one<{ state: string }>('SELECT state FROM tasks WHERE id = $1', [task.task_id]))!.state, 'cancelled');

    const [hook] = await waitFor(async () => (receiver.received.length ? receiver.received : undefined), 30_000, 'the webhook');
    const secret = (await cluster.api('GET', '/api/webhooks/secret', { key })).body.secret as string;
    const payload = new Webhook(secret).verify(hook!.body, hook!.headers as Record<string, string>) as {
      event: string;
      status: string;
      data: { message: string };
    };
    t.like(payload, { event: 'job.failed', status: 'FAILED', data: { message: JOB_CANCELLED } });

    const again = await cluster.api('POST', `/api/jobs/${jobId}/cancel`, { key, body: {} });
    t.is(again.status, 409);
    t.regex(again.body.message, /already finished \(FAILED\)/);
  } finally {
    await receiver.close();
  }
});

test.serial('a queued job cancelled ends at once; a completed one is 409; another organization gets 404', async (t) => {
  const { org, key } = await cluster.org({ plan: 'pro', credits: 10 });
  const created = await cluster.api('POST', '/api/jobs', {
    key,
    body: { functionName: 'VideoShorts', fileUrl: 'https://example.com/q.mp4' },
  });
  const jobId = created.body.id as string;
  const other = await cluster.org();
  const foreign = await cluster.api('POST', `/api/jobs/${jobId}/cancel`, { key: other.key, body: {} });
  t.is(foreign.status, 404);
  t.is((await cluster.api('GET', `/api/jobs/${jobId}`, { key })).body.status, 'PROCESSING', "another organization's cancel did nothing");

  const cancelled = await cluster.api('POST', `/api/jobs/${jobId}/cancel`, { key, body: {} });
  t.is(cancelled.status, 202);
  t.is(cancelled.body.status, 'FAILED');
  t.like((await cluster.api('GET', `/api/jobs/${jobId}`, { key })).body, { status: 'FAILED', message: JOB_CANCELLED });
  t.deepEqual(await orgCredits(org.id), { credits: 10, reserved: 0 });
  t.is(await agent.lease(500), undefined, 'nothing is left for an agent to take');

  const done = await insertCompletedJob(cluster.app, { organizationId: org.id, words: [], shorts: [{ startTime: 0, endTime: 2 }] });
  const finished = await cluster.api('POST', `/api/jobs/${done}/cancel`, { key, body: {} });
  t.is(finished.status, 409);
  t.regex(finished.body.message, /already finished \(COMPLETED\)/);
});

test.serial('a render being rendered is cancelled: its agent stops and the render reads CANCELLED; a finished one is 409', async (t) => {
  const { key, renderId, task } = await leaseRender(cluster, agent);
  const other = await cluster.org();
  t.is((await cluster.api('POST', `/api/render/${renderId}/cancel`, { key: other.key, body: {} })).status, 404);
  t.false(await stopAsTheAgentDoes(task));

  const cancelled = await cluster.api('POST', `/api/render/${renderId}/cancel`, { key, body: {} });
  t.is(cancelled.status, 202, JSON.stringify(cancelled.body));
  t.is(cancelled.body.type, 'progress');
  t.true(await stopAsTheAgentDoes(task));
  t.deepEqual((await cluster.api('GET', `/api/render/${renderId}`, { key })).body, {
    type: 'error',
    message: RENDER_CANCELLED,
    code: 'CANCELLED',
  });
  const again = await cluster.api('POST', `/api/render/${renderId}/cancel`, { key, body: {} });
  t.is(again.status, 409);

  // A render still queued ends at once.
  const { key: k2, renderId: queuedId, task: leased } = await leaseRender(cluster, agent);
  await agent.client.call(
    'FailTask',
    { task_id: leased.task_id, lease_token: leased.lease_token, message: 'x', retryable: false },
    { retryForMs: 0 },
  );
  const jobId = (await cluster.app.db.one<{ jobId: string }>('SELECT job_id AS "jobId" FROM renders WHERE id = $1', [queuedId]))!.jobId;
  const queued = await cluster.api('POST', '/api/render', { key: k2, body: { id: jobId, target: 0 } });
  const now = await cluster.api('POST', `/api/render/${queued.body.renderId}/cancel`, { key: k2, body: {} });
  t.is(now.status, 202);
  t.like(now.body, { type: 'error', code: 'CANCELLED', message: RENDER_CANCELLED });
});

needing({ tools: { pocketsphinx: havePocketsphinx } }).serial(
  'a real agent downloading a job stops within seconds of the cancel, and the job ends Cancelled with its credits back',
  async (t) => {
    const video = await makeTestVideo(path.join(cluster.dataDir, 'slow.mp4'), { seconds: 3 });
    // About 25 s to download at 3 KB/s: the cancel comes while the agent is still at it.
    const slow = await serveFiles({ 'slow.mp4': video }, { bytesPerSec: 3_000 });
    const receiver = await startWebhookReceiver();
    try {
      const agentProcess = await cluster.startAgent({ AGENT_TASK_TYPES: 'analyze-video' });
      const { org, key } = await cluster.org({ plan: 'pro', credits: 10 });
      const created = await cluster.api('POST', '/api/jobs', {
        key,
        body: { functionName: 'VideoShorts', fileUrl: slow.url('slow.mp4'), webhook: receiver.url() },
      });
      t.is(created.status, 201);
      const jobId = created.body.id as string;
      await agentProcess.waitForLog(/"task stage".*"downloading"/, 60_000);
      const askedAt = Date.now();
      const cancelled = await cluster.api('POST', `/api/jobs/${jobId}/cancel`, { key, body: {} });
      t.is(cancelled.status, 202, JSON.stringify(cancelled.body));
      await agentProcess.waitForLog(/"task cancelled"/, 20_000);
      const job = await waitFor(
        async () => {
          const j = await cluster.api('GET', `/api/jobs/${jobId}`, { key });
          return j.body.status === 'FAILED' ? j.body : undefined;
        },
        20_000,
        'the job to end',
      );
      const tookMs = Date.now() - askedAt;
      t.true(tookMs < 10_000, `stopped ${tookMs} ms after the cancel`);
      t.like(job, { status: 'FAILED', message: 'Cancelled' });
      t.deepEqual(await orgCredits(org.id), { credits: 10, reserved: 0 });
      const [hook] = await waitFor(async () => (receiver.received.length ? receiver.received : undefined), 30_000, 'the webhook');
      t.like(JSON.parse(hook!.body), { event: 'job.failed', jobId, data: { message: 'Cancelled' } });
    } finally {
      await cluster.killAgents();
      await receiver.close();
      await slow.close();
    }
  },
);
