import test from 'ava';
import { waitFor } from './helpers/cluster.js';
import { assertSettled, startFaultStack, type FaultStack, type LoggedProcess } from './helpers/fault-stack.js';
import { serveFiles, type MediaServer } from './helpers/media.js';
import { makeTalkVideo } from './helpers/talk-video.js';
import { fliteAvailable } from './transcribe-synth.js';

// Fault suite, database side: a dedicated Postgres restarted under running jobs and renders, and
// the coordinator killed with SIGKILL mid-job, with real coordinator and agent processes.

let stack: FaultStack;
let media: MediaServer;
/** The same file served slowly: an analysis stays in its download long enough to be caught mid-job. */
let slowMedia: MediaServer;
let agent: LoggedProcess;

const PHRASES = [
  { text: 'Practice every single day and you will learn fast.', pauseAfter: 0.6 },
  { text: 'Ten minutes of speaking beats three hours of reading.', pauseAfter: 0.6 },
];

test.before(async () => {
  if (!fliteAvailable()) throw new Error('flite is required (apt-get install flite)');
  stack = await startFaultStack('db');
  const talk = await makeTalkVideo(stack.dataDir, { phrases: PHRASES });
  // The slow copy keeps an analysis in its download long enough to be caught mid-job.
  media = await serveFiles({ 'talk.mp4': talk.videoPath });
  slowMedia = await serveFiles({ 'talk.mp4': talk.videoPath }, { bytesPerSec: 200_000 });
  agent = await stack.startAgent('agent-db', { MAX_CONCURRENT_TASKS: '2' });
});

test.after.always(async () => {
  await slowMedia?.close();
  await media?.close();
  await stack?.close();
});

const jobBody = (url: string) => ({
  functionName: 'VideoShorts',
  fileUrl: url,
  options: { predefinedShorts: [{ title: 'Practice', start: 0, end: 2 }] },
});

async function completedJob(key: string): Promise<string> {
  const created = await stack.api(key, 'POST', '/api/jobs', jobBody(media.url('talk.mp4')));
  if (created.status !== 201) throw new Error(JSON.stringify(created.body));
  await waitFor(
    async () => (await stack.api(key, 'GET', `/api/jobs/${created.body.id}`)).body.status === 'COMPLETED',
    120_000,
    'the first job',
  );
  return created.body.id;
}

/** Tasks that crashed on the agent (not failed with a reason: broke) since log line `from`. */
const crashes = (from: number) => agent.logs.slice(from).filter((l) => l.includes('"msg":"task crashed"'));

const leasedTasks = async (orgId: string) =>
  Number(
    (await stack.db.one<{ n: number }>(`SELECT count(*) AS n FROM tasks WHERE organization_id = $1 AND state = 'leased' AND progress > 0`, [
      orgId,
    ]))!.n,
  );

test.serial('Postgres restarted while jobs and renders run: all end, nothing twice, credits and storage exact', async (t) => {
  const org = await stack.org('pro', 10);
  const key = org.key;
  const logFrom = agent.logs.length;
  const base = await completedJob(key);

  const jobs = [];
  for (let i = 0; i < 2; i++) jobs.push((await stack.api(key, 'POST', '/api/jobs', jobBody(slowMedia.url('talk.mp4')))).body.id);
  const renders = [];
  for (let i = 0; i < 2; i++) {
    const r = await stack.api(key, 'POST', '/api/render', { id: base, target: 0, preset: 'VIRAL', size: { width: 360, height: 640 } });
    t.is(r.status, 201, JSON.stringify(r.body));
    renders.push(r.body.renderId);
  }
  await waitFor(async () => (await leasedTasks(org.id)) >= 2, 60_000, 'two tasks under way');
  await stack.restartPostgres(3000);

  const settled = await assertSettled(t, stack, org, 10);
  t.is(settled.jobs.length, 3);
  t.is(settled.renders.length, 2);
  // A restart is a hiccup, not a reason to fail work: every job and render still completes.
  t.deepEqual(
    settled.jobs.map((j) => j.status),
    ['COMPLETED', 'COMPLETED', 'COMPLETED'],
  );
  t.deepEqual(
    settled.renders.map((r) => r.status),
    ['done', 'done'],
  );
  // The API answers again as before.
  t.is((await stack.api(key, 'GET', `/api/jobs/${jobs[0]}`)).status, 200);
  t.is((await stack.api(key, 'GET', `/api/render/${renders[0]}`)).body.type, 'done');
  t.deepEqual(crashes(logFrom), []);
});

test.serial('the coordinator killed with SIGKILL mid-job and restarted: the job and a render still end once', async (t) => {
  const org = await stack.org('pro', 10);
  const key = org.key;
  const logFrom = agent.logs.length;
  const base = await completedJob(key);
  const job = (await stack.api(key, 'POST', '/api/jobs', jobBody(slowMedia.url('talk.mp4')))).body.id;
  const render = (await stack.api(key, 'POST', '/api/render', { id: base, target: 0, preset: 'VIRAL', size: { width: 360, height: 640 } }))
    .body.renderId;
  await waitFor(async () => (await leasedTasks(org.id)) >= 1, 60_000, 'a task under way');

  await stack.coordinator.kill('SIGKILL');
  await new Promise((r) => setTimeout(r, 1500));
  await stack.startCoordinator();

  const settled = await assertSettled(t, stack, org, 10);
  t.deepEqual(
    settled.jobs.map((j) => j.status),
    ['COMPLETED', 'COMPLETED'],
  );
  t.deepEqual(
    settled.renders.map((r) => r.status),
    ['done'],
  );
  t.is((await stack.api(key, 'GET', `/api/jobs/${job}`)).body.status, 'COMPLETED');
  t.is((await stack.api(key, 'GET', `/api/render/${render}`)).body.type, 'done');
  // The agent may take a task again while its own lost attempt still winds down; the old attempt's
  // clean-up must not pull the new one's files away (it did: "task crashed", an attempt burnt).
  t.deepEqual(crashes(logFrom), []);
});
