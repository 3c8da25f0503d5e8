import test from 'ava';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';

// One organization cannot fill the render line: at most RENDER_ACTIVE_LIMIT (3 here) queued or
// running renders each, 429 with Retry-After beyond, and a finished render frees its place.
let cluster: TestCluster;
const WORDS = [{ text: 'hello', start: 0.5, end: 0.9 }];

test.before(async () => {
  cluster = await startCluster('render_limits', { renderActiveLimit: 3 });
});
test.after.always(() => cluster?.close());

async function setup(plan = 'pro') {
  const { org, key } = await cluster.org({ plan });
  const jobId = await insertCompletedJob(cluster.app, { organizationId: org.id, words: WORDS, shorts: [{ startTime: 0, endTime: 2 }] });
  return { org, key, jobId };
}
const render = (key: string, jobId: string) => cluster.api('POST', '/api/render', { key, body: { id: jobId, target: 0 } });

test('queued and running renders per organization are capped: 429 with Retry-After, others unaffected', async (t) => {
  const a = await setup();
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await render(a.key, a.jobId);
    t.is(r.status, 201);
    ids.push(r.body.renderId);
  }
  const refused = await render(a.key, a.jobId);
  t.is(refused.status, 429);
  t.is(refused.body.error, 'Too Many Requests');
  t.regex(refused.body.message, /3 renders queued or running/);
  t.true(Number(refused.headers.get('retry-after')) >= 1);
  t.is(
    Number((await cluster.app.db.one<{ n: number }>('SELECT count(*)::int AS n FROM renders WHERE organization_id = $1', [a.org.id]))!.n),
    3,
    'nothing was created',
  );

  // Another organization still gets its renders in.
  const b = await setup();
  t.is((await render(b.key, b.jobId)).status, 201);

  // A running one counts; a finished one frees its place.
  await cluster.app.db.query(`UPDATE renders SET status = 'progress' WHERE id = $1`, [ids[0]]);
  t.is((await render(a.key, a.jobId)).status, 429);
  await cluster.app.db.query(`UPDATE renders SET status = 'done' WHERE id = $1`, [ids[0]]);
  t.is((await render(a.key, a.jobId)).status, 201);
});

test('concurrent creates cannot race past the cap', async (t) => {
  const a = await setup();
  const answers = await Promise.all(Array.from({ length: 8 }, () => render(a.key, a.jobId)));
  t.is(answers.filter((r) => r.status === 201).length, 3);
  t.is(answers.filter((r) => r.status === 429).length, 5);
});
