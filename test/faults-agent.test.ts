import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { waitFor } from './helpers/cluster.js';
import { assertSettled, startFaultStack, startTcpProxy, type FaultStack, type LoggedProcess } from './helpers/fault-stack.js';
import { serveFiles, type MediaServer } from './helpers/media.js';
import { makeTalkVideo } from './helpers/talk-video.js';
import { needing } from './helpers/requirements.js';
import { fliteAvailable } from './transcribe-synth.js';

// Fault suite, agent side: the network between an agent and the coordinator cut for longer than a
// lease (a TCP proxy in between that stops passing bytes), and an agent whose work folder is full
// (a small tmpfs, filled). Real coordinator and agent processes against a dedicated Postgres.

let stack: FaultStack;
let media: MediaServer;
let slow: MediaServer;

const PHRASES = [
  { text: 'Practice every single day and you will learn fast.', pauseAfter: 0.6 },
  { text: 'Ten minutes of speaking beats three hours of reading.', pauseAfter: 0.6 },
];

/** A 4 MiB tmpfs to fill, when this process may mount one (root); undefined otherwise. */
function mountSmallTmpfs(dir: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

test.before(async () => {
  if (!fliteAvailable()) throw new Error('flite is required (apt-get install flite)');
  stack = await startFaultStack('agent', { LEASE_TTL_MS: '3000' });
  const talk = await makeTalkVideo(stack.dataDir, { phrases: PHRASES });
  media = await serveFiles({ 'talk.mp4': talk.videoPath });
  slow = await serveFiles({ 'talk.mp4': talk.videoPath }, { bytesPerSec: 200_000 });
});

test.after.always(async () => {
  if (haveTmpfs) execFileSync('umount', ['-l', tmpfsDir]);
  rmSync(tmpfsDir, { recursive: true, force: true });
  await slow?.close();
  await media?.close();
  await stack?.close();
});

const jobBody = (url: string) => ({
  functionName: 'VideoShorts',
  fileUrl: url,
  options: { predefinedShorts: [{ title: 'Practice', start: 0, end: 2 }] },
});
const noCrashes = (agent: LoggedProcess) => agent.logs.filter((l) => l.includes('"msg":"task crashed"'));

test.serial(
  "network cut between an agent and the coordinator for longer than a lease: another agent finishes, the old one's late results are refused",
  async (t) => {
    const org = await stack.org('pro', 10);
    const grpcPort = Number(stack.grpcAddress.split(':')[1]);
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: grpcPort });
    t.teardown(() => proxy.close());
    const cutOff = await stack.startAgent('agent-cut-off', { COORDINATOR_GRPC: proxy.address, MAX_CONCURRENT_TASKS: '2' });
    const cutOffId = JSON.parse(await cutOff.waitForLog(/"msg":"agent ready"/)).agentId;
    const base = (await stack.api(org.key, 'POST', '/api/jobs', jobBody(media.url('talk.mp4')))).body.id;
    await waitFor(async () => (await stack.api(org.key, 'GET', `/api/jobs/${base}`)).body.status === 'COMPLETED', 120_000, 'the first job');

    // A job (slow download) and a render, both taken by the agent about to be cut off.
    const job = (await stack.api(org.key, 'POST', '/api/jobs', jobBody(slow.url('talk.mp4')))).body.id;
    const render = (
      await stack.api(org.key, 'POST', '/api/render', { id: base, target: 0, preset: 'VIRAL', size: { width: 360, height: 640 } })
    ).body.renderId;
    const tasks = await waitFor(
      async () => {
        const rows = await stack.db.query<{ id: string; token: string }>(
          `SELECT id, lease_token AS token FROM tasks WHERE subject_id IN ($1, $2) AND state = 'leased' AND leased_by = $3 AND progress > 0`,
          [job, render, cutOffId],
        );
        return rows.length === 2 ? rows : undefined;
      },
      60_000,
      'the cut-off agent at work on both',
    );

    proxy.cut();
    const coordinatorLogFrom = stack.coordinator.logs.length;
    for (const task of tasks)
      await stack.coordinator.waitForLog(new RegExp(`"msg":"lease expired".*"taskId":"${task.id}"`), {
        after: coordinatorLogFrom,
        timeoutMs: 30_000,
      });
    const rescuer = await stack.startAgent('agent-rescuer', { MAX_CONCURRENT_TASKS: '2' });
    await waitFor(
      async () => {
        const [j, r] = [await stack.api(org.key, 'GET', `/api/jobs/${job}`), await stack.api(org.key, 'GET', `/api/render/${render}`)];
        return ['COMPLETED', 'FAILED'].includes(j.body.status) && ['done', 'error'].includes(r.body.type);
      },
      180_000,
      'the job and the render',
    );

    // The old agent comes back with work done under its lost leases: refused, and it drops it.
    proxy.restore();
    // (A render may already be asking for its upload URL, whose call times out during the cut; the
    // failure it then reports is refused the same way.)
    for (const task of tasks)
      await cutOff.waitForLog(new RegExp(`"msg":"lease lost; (work stopped|failure report refused)".*"taskId":"${task.id}".*"attempt":1`), {
        timeoutMs: 120_000,
      });
    for (const task of tasks) {
      const row = (await stack.db.one<{ state: string; token: string | null }>(
        `SELECT state, lease_token AS token FROM tasks WHERE id = $1`,
        [task.id],
      ))!;
      t.is(row.state, 'completed');
      t.not(row.token, task.token, "completed under the rescuer's lease, not the old one");
    }

    const settled = await assertSettled(t, stack, org, 10);
    t.deepEqual(
      settled.jobs.map((j) => j.status),
      ['COMPLETED', 'COMPLETED'],
    );
    t.deepEqual(
      settled.renders.map((r) => r.status),
      ['done'],
    );
    t.deepEqual(noCrashes(rescuer), []);
    await cutOff.kill('SIGTERM');
    await rescuer.kill('SIGTERM');
  },
);

const tmpfsDir = `/tmp/shorts-fault-full-disk-${process.pid}`;
mkdirSync(tmpfsDir, { recursive: true });
const haveTmpfs = mountSmallTmpfs(tmpfsDir);
// Mounting a tmpfs needs root (CAP_SYS_ADMIN), which a host may withhold on purpose: a skip everywhere.
needing({ optional: { 'root to mount a small tmpfs (CAP_SYS_ADMIN)': haveTmpfs } }).serial(
  'an agent whose work folder is full: the job and the render fail with a clear message, nothing is charged or kept',
  async (t) => {
    const org = await stack.org('pro', 10);
    // A finished job to render from, made by a healthy agent that then leaves.
    const healthy = await stack.startAgent('agent-healthy');
    const base = (await stack.api(org.key, 'POST', '/api/jobs', jobBody(media.url('talk.mp4')))).body.id;
    await waitFor(async () => (await stack.api(org.key, 'GET', `/api/jobs/${base}`)).body.status === 'COMPLETED', 120_000, 'the first job');
    await healthy.kill('SIGTERM');

    // The full agent's folder: 4 MiB with all but 32 KiB taken by something else.
    await writeFile(path.join(tmpfsDir, 'filler'), Buffer.alloc(4 * 1024 * 1024 - 32 * 1024));
    const full = await stack.startAgent('agent-full', { AGENT_WORK_DIR: path.join(tmpfsDir, 'work') });
    const job = (await stack.api(org.key, 'POST', '/api/jobs', jobBody(media.url('talk.mp4')))).body.id;
    const render = (
      await stack.api(org.key, 'POST', '/api/render', { id: base, target: 0, preset: 'VIRAL', size: { width: 360, height: 640 } })
    ).body.renderId;

    const settled = await assertSettled(t, stack, org, 10);
    const failedJob = settled.jobs.find((j) => j.id === job)!;
    const failedRender = settled.renders.find((r) => r.id === render)!;
    t.is(failedJob.status, 'FAILED');
    t.regex(failedJob.message!, /no space left|disk|full/i);
    t.is(failedRender.status, 'error');
    t.is(failedRender.message, 'The agent agent-full ran out of disk space in its work folder (no space left on device)');
    t.log(`job: ${failedJob.message}; render: ${failedRender.message}`);
    await full.kill('SIGTERM');
  },
);
