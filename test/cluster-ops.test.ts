// Operating the farm with real processes: agents seen, drained and told to cancel through the admin
// CLI, work that no connected agent can take saying so in the API, and an agent whose work folder
// breaks failing its task instead of sitting on the lease.
import test from 'ava';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { recordingLogger, startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { makeTestVideo, serveFiles, type MediaServer } from './helpers/media.js';
import { enqueueProbe } from '../coordinator/src/probes/probes.js';
import { FakeAgent } from './helpers/fake-agent.js';
import { havePocketsphinx, needing } from './helpers/requirements.js';
import { placementOf } from '@shorts/common/tasks/contracts';
import { admin, adminJson } from './helpers/admin-cli.js';

const log = recordingLogger();
let cluster: TestCluster;
let media: MediaServer;
let slowMedia: MediaServer;
let orgId: string;
let key: string;

test.before(async () => {
  cluster = await startCluster('cluster_ops', { waitingNoticeMs: 300 }, { log });
  const video = await makeTestVideo(path.join(cluster.dataDir, 'clip.mp4'), { seconds: 3 });
  media = await serveFiles({ 'clip.mp4': video });
  // About 25 s to download: time to drain the agent and cancel the task while it runs (the CLI
  // starts in a few seconds on a busy machine).
  slowMedia = await serveFiles({ 'clip.mp4': video }, { bytesPerSec: 3_000 });
  ({
    org: { id: orgId },
    key,
  } = await cluster.org());
});

test.after.always(async () => {
  await media?.close();
  await slowMedia?.close();
  await cluster?.close();
});

test.afterEach.always(() => cluster.killAgents());

interface ListedAgent {
  id: string;
  name: string;
  state: string;
  taskTypes: string[];
  capabilities: string[];
}

const taskOf = (subjectId: string) =>
  cluster.app.db.one<{ id: string; state: string }>('SELECT id, state FROM tasks WHERE subject_id = $1', [subjectId]);
const taskState = async (id: string) => (await cluster.app.queue.get(id))?.state;

test.serial('work that no connected agent can take says so in the job and render status, and in the log once', async (t) => {
  const job = await cluster.api('POST', '/api/jobs', {
    key,
    body: { functionName: 'VideoShorts', fileUrl: 'https://example.com/talk.mp4' },
  });
  t.is(job.status, 201);
  const done = await insertCompletedJob(cluster.app, { organizationId: orgId, words: [], shorts: [{ startTime: 0, endTime: 2 }] });
  const render = await cluster.api('POST', '/api/render', { key, body: { id: done, target: 0 } });
  t.is(render.status, 201);
  const renderTask = (await taskOf(render.body.renderId))!;

  // Before the threshold nothing is said.
  t.is((await cluster.api('GET', `/api/render/${render.body.renderId}`, { key })).body.stage, undefined);
  await cluster.app.db.query(`UPDATE tasks SET queued_at = now() - interval '1 minute' WHERE state = 'queued'`);
  await cluster.app.queue.tick();
  await cluster.app.queue.tick();

  const jobView = (await cluster.api('GET', `/api/jobs/${job.body.id}`, { key })).body;
  t.like(jobView, { status: 'PROCESSING', progress: 5, stage: 'waiting for an analysis agent' });
  t.false('message' in jobView, 'message stays for failures');
  const renderView = (await cluster.api('GET', `/api/render/${render.body.renderId}`, { key })).body;
  t.deepEqual(renderView, {
    type: 'queued',
    status: 'QUEUED',
    queuePosition: 1,
    progress: 0,
    stage: 'waiting for a render agent',
    captionPosition: { position: 'bottom', chosenBy: 'automatic' },
  });
  const logged = log.records.filter((r) => r.msg === 'task waiting: no connected agent can run it' && r.taskId === renderTask.id);
  t.is(logged.length, 1, 'logged once, not on every tick');
  t.is(logged[0]!.level, 'warn');

  // A render agent connects: the render is taken and stops waiting; the job still waits for analysis.
  await cluster.startAgent({ AGENT_TASK_TYPES: 'render-short' });
  await waitFor(async () => ((await taskState(renderTask.id)) !== 'queued' ? true : undefined), 30_000, 'render leased');
  t.is((await cluster.api('GET', `/api/render/${render.body.renderId}`, { key })).body.stage, undefined);
  await cluster.app.queue.tick();
  t.is((await cluster.api('GET', `/api/jobs/${job.body.id}`, { key })).body.stage, 'waiting for an analysis agent');
  await cluster.app.queue.cancel((await taskOf(job.body.id))!.id);
  const failed = (await cluster.api('GET', `/api/jobs/${job.body.id}`, { key })).body;
  t.like(failed, { status: 'FAILED', message: 'Cancelled' });
  t.is(failed.stage, undefined);
});

test.serial('operators list agents, drain one and cancel its running task from the admin CLI', async (t) => {
  const agent = await cluster.startAgent();
  const listed = await adminJson<ListedAgent[]>(cluster, ['agent', 'list', '--json']);
  const me = listed.find((a) => a.name === agent.name)!;
  t.like(me, { state: 'online', slots: 1, runningTasks: 0, reportedRunningTasks: 0 });
  t.true(me.taskTypes.includes('probe-media'), me.taskTypes.join(','));
  t.true(me.capabilities.includes('encoder:libx264'), me.capabilities.join(','));

  const first = await cluster.api('POST', '/api/probes', { key, body: { url: slowMedia.url('clip.mp4') } });
  await agent.waitForLog(/"task stage".*"downloading"/, 30_000);
  const drained = await adminJson<{ state: string }>(cluster, ['agent', 'drain', me.id, '--json']);
  t.is(drained.state, 'draining');
  await agent.waitForLog(/"draining: finishing running tasks, taking no new work"/, 20_000);
  const second = await cluster.api('POST', '/api/probes', { key, body: { url: media.url('clip.mp4') } });

  const cancelled = await adminJson<Array<{ outcome: string }>>(cluster, ['task', 'cancel', first.body.id, '--json']);
  t.deepEqual(
    cancelled.map((c) => c.outcome),
    ['cancel requested'],
  );
  await agent.waitForLog(/"task cancelled"/, 20_000);
  t.regex(await admin(cluster, ['agent', 'list']), new RegExp(`${me.id}\\s+${agent.name}\\s+draining\\s+[01]/1`));
  t.is(await taskState(first.body.id), 'cancelled');
  t.is((await cluster.api('GET', `/api/probes/${first.body.id}`, { key })).body.state, 'cancelled');

  // Idle now and draining: the second probe stays queued until the drain is lifted.
  await waitFor(
    async () =>
      (await cluster.app.db.one<{ running_tasks: number }>('SELECT running_tasks FROM agents WHERE id = $1', [me.id]))?.running_tasks === 0,
    20_000,
    'idle heartbeat',
  );
  t.is(await taskState(second.body.id), 'queued');
  t.is((await adminJson<{ state: string }>(cluster, ['agent', 'resume', me.id, '--json'])).state, 'online');
  await waitFor(async () => ((await taskState(second.body.id)) === 'completed' ? true : undefined), 60_000, 'second probe to complete');
  t.pass();
});

test.serial('cancelling a queued task from the CLI ends it at the next watchdog tick', async (t) => {
  const id = await enqueueProbe(cluster.app.db.pool, cluster.app.queue, orgId, 'http://example.invalid/never');
  await admin(cluster, ['task', 'cancel', id]);
  t.is(await taskState(id), 'queued', 'the CLI only asks; the coordinator carries it out');
  await cluster.app.queue.tick();
  t.is(await taskState(id), 'cancelled');
  const again = await t.throwsAsync<Error & { stderr: string }>(admin(cluster, ['task', 'cancel', id]));
  t.regex(String(again?.stderr), /Nothing to cancel: task .* is cancelled/);
});

test.serial('an agent whose work folder cannot be made fails the task rather than sitting on its lease', async (t) => {
  const agent = await cluster.startAgent({ AGENT_TASK_TYPES: 'probe-media' });
  const workDir = path.join(cluster.dataDir, agent.name);
  await rm(workDir, { recursive: true, force: true });
  await writeFile(workDir, 'not a folder'); // every task's mkdir now fails
  const id = await enqueueProbe(cluster.app.db.pool, cluster.app.queue, orgId, media.url('clip.mp4'));
  const done = await waitFor(
    async () => {
      const task = await cluster.app.queue.get(id);
      return task?.state === 'failed' ? task : undefined;
    },
    60_000,
    'the task to fail',
  );
  t.regex(done.lastError ?? '', /Internal processing error: .*(ENOTDIR|EEXIST)/);
  const kinds = (await cluster.app.db.query<{ kind: string }>('SELECT kind FROM task_events WHERE task_id = $1 ORDER BY id', [id])).map(
    (e) => e.kind,
  );
  t.deepEqual(kinds, ['leased', 'retry', 'leased', 'retry', 'leased', 'failed']);
});

needing({ tools: { pocketsphinx: havePocketsphinx } }).serial(
  'the agent a laptop runs with no configuration has everything analysis requires, and takes it',
  async (t) => {
    const agent = await cluster.startAgent({ AGENT_TASK_TYPES: 'analyze-video' });
    await agent.waitForLog(/"agent ready"/, 60_000);
    const row = (await cluster.app.db.one<{ id: string; taskTypes: string[]; tags: string[] }>(
      `SELECT id, task_types AS "taskTypes", capability_tags AS tags FROM agents WHERE name = $1`,
      [agent.name],
    ))!;
    t.deepEqual(row.taskTypes, ['analyze-video']);
    const requires = placementOf('analyze-video').requires;
    t.true(requires.length > 0);
    t.deepEqual(
      requires.filter((tag) => !row.tags.includes(tag)),
      [],
      `agent tags: ${row.tags.join(',')}`,
    );
    t.true(row.tags.includes('face-detector:cpu'), 'where its face detector runs is a tag of its own');
    // A job's analysis is leased by it (it then fails to download from nowhere; that is not the point).
    const job = await cluster.api('POST', '/api/jobs', {
      key,
      body: { functionName: 'VideoShorts', fileUrl: 'http://127.0.0.1:9/nothing.mp4' },
    });
    t.is(job.status, 201);
    const task = (await taskOf(job.body.id))!;
    await waitFor(
      async () =>
        (await cluster.app.db.one(`SELECT 1 FROM task_events WHERE task_id = $1 AND kind = 'leased' AND agent_id = $2`, [task.id, row.id]))
          ? true
          : undefined,
      30_000,
      'the analysis to be leased by the default agent',
    );
    await cluster.app.queue.cancel(task.id);
  },
);

test.serial('a render made through the API goes to the NVENC host of a mixed farm, and to a CPU host once NVENC is busy', async (t) => {
  // Earlier tests' agents were killed with work leased; that work must not be offered here.
  for (const { id } of await cluster.app.db.query<{ id: string }>(`SELECT id FROM tasks WHERE state IN ('queued', 'leased')`))
    await cluster.app.queue.cancel(id);
  const cpu = await new FakeAgent(cluster.app.grpcAddress, undefined, 'cpu-host').register(['render-short']);
  const gpu = await new FakeAgent(cluster.app.grpcAddress, undefined, 'nvenc-host').register(['render-short'], { nvenc: true });
  try {
    const jobId = await insertCompletedJob(cluster.app, { organizationId: orgId, words: [], shorts: [{ startTime: 0, endTime: 2 }] });
    const first = (await cluster.api('POST', '/api/render', { key, body: { id: jobId, target: 0 } })).body.renderId;
    const firstTask = (await taskOf(first))!.id;
    t.is(await cpu.lease(300), undefined, 'the CPU host is passed over while the NVENC host has a free slot');
    const onGpu = await gpu.lease();
    t.is(onGpu?.task_id, firstTask);
    t.true(JSON.parse(onGpu!.payload_json).sourceUrl.startsWith('http'), 'the real render payload, signed at lease');
    const second = (await cluster.api('POST', '/api/render', { key, body: { id: jobId, target: 0 } })).body.renderId;
    t.is((await cpu.lease())?.task_id, (await taskOf(second))!.id, 'the NVENC host is full: the CPU host renders');
  } finally {
    cpu.close();
    gpu.close();
  }
});
