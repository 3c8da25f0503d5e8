import test from 'ava';
import * as grpc from '@grpc/grpc-js';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { FakeAgent, probeResult } from './helpers/fake-agent.js';
import { enqueueProbe } from '../coordinator/src/probes/probes.js';
import { ANALYZE_STAGES } from '@shorts/common/tasks/analyze-video';
import { RENDER_STAGES } from '@shorts/common/tasks/render-short';
import { PROBE_MEDIA_STAGES } from '@shorts/common/tasks/probe-media';
import { parseTaskResult } from '@shorts/common/tasks/contracts';
import type { Reframe } from '@shorts/common/reframe/types';

// What an agent reports is checked against its task type's contract (common/src/tasks/<type>.ts):
// a report that does not parse is refused with INVALID_ARGUMENT and the task fails for good, saying why.
let cluster: TestCluster;
let agent: FakeAgent;

test.before(async () => {
  cluster = await startCluster('task_contracts');
  agent = await new FakeAgent(cluster.app.grpcAddress, undefined, 'contract').register(['probe-media', 'analyze-video']);
});
test.after.always(async () => {
  agent?.close();
  await cluster?.close();
});

const taskRow = (id: string) =>
  cluster.app.db.one<{ state: string; last_error: string | null; result: unknown }>(
    'SELECT state, last_error, result FROM tasks WHERE id = $1',
    [id],
  );

test.serial('a probe result that does not match the contract is refused and the task fails saying which field', async (t) => {
  const { org } = await cluster.org();
  const id = await enqueueProbe(cluster.app.db.pool, cluster.app.queue, org.id, 'http://example.invalid/a.mp4');
  const task = (await agent.lease(3000))!;
  t.is(task.task_id, id);
  const err = await t.throwsAsync(agent.complete(id, task.lease_token, { formatName: 'mp4', durationSec: 'long', streams: [] }));
  t.is((err as grpc.ServiceError).code, grpc.status.INVALID_ARGUMENT);
  const row = await taskRow(id);
  t.is(row!.state, 'failed');
  t.regex(row!.last_error!, /result does not match the probe-media contract: durationSec/);
  t.is(row!.result, null, 'nothing of the refused result is kept');
});

test.serial('a result that is not JSON is refused the same way', async (t) => {
  const { org } = await cluster.org();
  const id = await enqueueProbe(cluster.app.db.pool, cluster.app.queue, org.id, 'http://example.invalid/b.mp4');
  const task = (await agent.lease(3000))!;
  const err = await t.throwsAsync(
    agent.client.call('CompleteTask', { task_id: id, lease_token: task.lease_token, result_json: '{"formatName":' }, { retryForMs: 0 }),
  );
  t.is((err as grpc.ServiceError).code, grpc.status.INVALID_ARGUMENT);
  t.regex((await taskRow(id))!.last_error!, /not valid JSON/);
});

test.serial('a result that matches is stored', async (t) => {
  const { org } = await cluster.org();
  const id = await enqueueProbe(cluster.app.db.pool, cluster.app.queue, org.id, 'http://example.invalid/c.mp4');
  const task = (await agent.lease(3000))!;
  await agent.complete(id, task.lease_token, probeResult('mov,mp4'));
  const row = await taskRow(id);
  t.is(row!.state, 'completed');
  t.deepEqual(row!.result, probeResult('mov,mp4'));
});

test.serial('analyze facts that do not parse fail the job before any work, releasing its credits', async (t) => {
  const { org, key } = await cluster.org({ plan: 'pro', credits: 10 });
  const created = await cluster.api('POST', '/api/jobs', {
    key,
    body: { functionName: 'VideoShorts', fileUrl: 'https://example.com/talk.mp4' },
  });
  t.is(created.status, 201);
  const task = (await agent.lease(3000))!;
  t.is(task.type, 'analyze-video');
  const err = await t.throwsAsync(
    agent.client.call(
      'ReportProgress',
      {
        task_id: task.task_id,
        lease_token: task.lease_token,
        progress: 0.1,
        stage: 'downloading',
        facts_json: JSON.stringify({ durationSec: -5, downloadBytes: 10 }),
      },
      { retryForMs: 0 },
    ),
  );
  t.is((err as grpc.ServiceError).code, grpc.status.INVALID_ARGUMENT);
  const job = await cluster.api('GET', `/api/jobs/${created.body.id}`, { key });
  t.is(job.body.status, 'FAILED');
  t.regex(job.body.message, /facts does not match the analyze-video contract: durationSec/);
  const credits = await cluster.app.db.one<{ reserved: string }>('SELECT reserved_credits AS reserved FROM organizations WHERE id = $1', [
    org.id,
  ]);
  t.is(Number(credits!.reserved), 0);
});

test("a short's reframe must be the Reframe shape or null", (t) => {
  const reframe: Reframe = {
    sourceWidth: 1920,
    sourceHeight: 1080,
    keyframes: [
      { time: 1, x: 600, y: 0, width: 608, height: 1080 },
      { time: 2, x: 0, y: 0, width: 1920, height: 1080, panels: [{ x: 0, y: 0, width: 960, height: 1080 }] },
    ],
    segments: [{ start: 1, end: 3, layout: 'single', tracks: [0] }],
  };
  const result = (shortReframe: unknown) => ({
    durationSec: 10,
    downloadBytes: 100,
    source: { name: 'a.mp4', objectKey: 'k', sizeBytes: 100, contentType: 'video/mp4', thumbnailKey: null, width: 1920, height: 1080 },
    transcript: { language: 'en', text: '', words: [], backend: 'test' },
    shorts: [
      {
        title: 'a',
        reason: null,
        startTime: 1,
        endTime: 3,
        startId: null,
        endId: null,
        text: '',
        crop: null,
        reframe: shortReframe,
        detections: null,
      },
    ],
  });
  t.deepEqual(parseTaskResult('analyze-video', result(reframe)).shorts[0]!.reframe, reframe);
  t.is(parseTaskResult('analyze-video', result(null)).shorts[0]!.reframe, null);
  t.throws(() => parseTaskResult('analyze-video', result([{ t: 0, x: 0, y: 0, w: 10, h: 10 }])), { message: /shorts\.0\.reframe/ });
  t.throws(() => parseTaskResult('analyze-video', result({ ...reframe, segments: [{ start: 1, end: 3, layout: 'zoom', tracks: [] }] })), {
    message: /layout/,
  });
});

test("each stage table runs forward from 0 to 1, and the job's progress only grows", (t) => {
  for (const stages of [ANALYZE_STAGES, RENDER_STAGES, PROBE_MEDIA_STAGES]) {
    const spans = Object.values(stages);
    for (const [i, s] of spans.entries()) {
      t.true(s.start >= 0 && s.end <= 1 && s.start <= s.end);
      if (i > 0) t.true(s.start >= spans[i - 1]!.end);
    }
    t.is(spans.at(-1)!.end, 1);
  }
  const jobProgress = Object.values(ANALYZE_STAGES).map((s) => s.jobProgress);
  t.deepEqual(
    jobProgress,
    [...jobProgress].sort((a, b) => a - b),
  );
});
