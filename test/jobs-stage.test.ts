// What a job is doing, in words, wherever a client sees the job: the list (which the studio's jobs
// screen polls) and the retrieve forms name the same stage, and say why work waits when no agent
// can take it. No agent runs here, so the job stays queued for as long as the test needs.
import test from 'ava';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';

let cluster: TestCluster;

test.before(async () => {
  cluster = await startCluster('jobs_stage', { waitingNoticeMs: 300 });
});

test.after.always(async () => {
  await cluster?.close();
});

// Contract 2.5: the list item's fields, none renamed or dropped by the addition.
const LIST_ITEM_FIELDS = [
  'id',
  'title',
  'description',
  'cost',
  'costBreakDown',
  'creditUsageStatus',
  'status',
  'functionName',
  'source',
  'createdAt',
  'progress',
  'shortsCount',
];

test.serial('a processing job names its stage in the list and the retrieve form, and why it waits once no agent can take it', async (t) => {
  const { org, key } = await cluster.org();
  const created = await cluster.api('POST', '/api/jobs', {
    key,
    body: { functionName: 'VideoShorts', name: 'Queued talk', fileUrl: 'https://example.com/talk.mp4' },
  });
  t.is(created.status, 201, JSON.stringify(created.body));
  const jobId = created.body.id as string;
  const done = await insertCompletedJob(cluster.app, { organizationId: org.id, words: [], shorts: [{ startTime: 0, endTime: 2 }] });

  const listed = async () => {
    const r = await cluster.api('GET', '/api/jobs', { key });
    t.is(r.status, 200);
    return Object.fromEntries((r.body.data as Array<{ id: string; status: string; stage?: string }>).map((item) => [item.id, item]));
  };
  const retrieved = async () => (await cluster.api('GET', `/api/jobs/${jobId}`, { key })).body;

  let items = await listed();
  t.like(items[jobId], { status: 'PROCESSING', progress: 5, stage: 'initiating services' });
  for (const field of LIST_ITEM_FIELDS) t.true(field in items[jobId], `list item keeps ${field}`);
  t.is((await retrieved()).stage, 'initiating services');
  // A finished job's status says it all.
  t.like(items[done], { status: 'COMPLETED' });
  t.false('stage' in items[done]);

  // The progress an agent reports moves the name along (contract 2.3: 30 transcribing).
  await cluster.app.db.query('UPDATE jobs SET progress = 30 WHERE id = $1', [jobId]);
  items = await listed();
  t.is(items[jobId].stage, 'transcribing');

  // Past the notice threshold with no connected agent: the list says why, as the retrieve form does.
  await cluster.app.db.query(`UPDATE tasks SET queued_at = now() - interval '1 minute' WHERE subject_id = $1`, [jobId]);
  await cluster.app.queue.tick();
  await cluster.app.queue.tick();
  items = await listed();
  t.is(items[jobId].stage, 'waiting for an analysis agent');
  t.like(await retrieved(), { status: 'PROCESSING', progress: 30, stage: 'waiting for an analysis agent' });
  t.false('stage' in items[done]);
});
