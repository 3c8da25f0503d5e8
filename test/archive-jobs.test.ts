import test from 'ava';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { newId } from '../coordinator/src/ids.js';
import { storeFile } from '../coordinator/src/files/store-file.js';
import { archiveExpiredJobs, ARCHIVE_QUEUE } from '../coordinator/src/archive/archive.js';
import { SWEEP_QUEUE } from '../coordinator/src/files/orphan-sweep.js';
import { UPLOAD_SWEEP_QUEUE } from '../coordinator/src/uploads/uploads.js';
import { admin } from './helpers/admin-cli.js';

let cluster: TestCluster;

test.before(async () => {
  cluster = await startCluster('archive_jobs');
});
test.after.always(() => cluster?.close());

const DAY = 86_400_000;

async function insertJob(orgId: string, ageDays: number, status = 'COMPLETED'): Promise<string> {
  const id = newId();
  await cluster.app.db.query(
    `INSERT INTO jobs (id, organization_id, function_name, title, status, progress, created_at) VALUES ($1, $2, 'VideoShorts', $3, $4, 100, $5)`,
    [id, orgId, `${ageDays} days old`, status, new Date(Date.now() - ageDays * DAY)],
  );
  return id;
}

async function addJobFiles(orgId: string, jobId: string | null, sizes: number[]) {
  return Promise.all(
    sizes.map((n, i) =>
      storeFile(cluster.app, { organizationId: orgId, jobId, name: `f${i}.bin`, type: 'image', source: Buffer.alloc(n, 9) }),
    ),
  );
}

const usedBytes = async (orgId: string) =>
  Number((await cluster.app.db.one<{ n: number }>('SELECT storage_used_bytes AS n FROM organizations WHERE id = $1', [orgId]))!.n);

function setRetentionWithCli(orgId: string, days: string) {
  return admin(cluster, ['org', 'set', orgId, '--retention-days', days, '--json']);
}

test('old jobs are archived per organization retention: 404 in the API, their files and objects gone, usage down by exactly their bytes', async (t) => {
  const a = await cluster.org();
  const b = await cluster.org();
  await setRetentionWithCli(a.org.id, '30');
  const cliRefused = await t.throwsAsync<Error & { stderr: string }>(setRetentionWithCli(a.org.id, '181'));
  t.regex(String(cliRefused?.stderr), /1 to 180/);
  await t.throwsAsync(setRetentionWithCli(a.org.id, '0'));

  const aOld = await insertJob(a.org.id, 31);
  const aOldFailed = await insertJob(a.org.id, 45, 'FAILED');
  const aRecent = await insertJob(a.org.id, 29);
  const aStuck = await insertJob(a.org.id, 60, 'PROCESSING');
  const bOld = await insertJob(b.org.id, 91);
  const bKept = await insertJob(b.org.id, 60); // within b's default 90 days

  const aOldFiles = await addJobFiles(a.org.id, aOld, [1000, 2000, 3000]);
  const aFailedFiles = await addJobFiles(a.org.id, aOldFailed, [400]);
  const aRecentFiles = await addJobFiles(a.org.id, aRecent, [50_000]);
  const aStuckFiles = await addJobFiles(a.org.id, aStuck, [7]);
  const aLibrary = await addJobFiles(a.org.id, null, [123]); // a watermark, say: no job, never archived
  const bOldFiles = await addJobFiles(b.org.id, bOld, [10_000, 20_000]);
  const bKeptFiles = await addJobFiles(b.org.id, bKept, [5]);

  // What the job's task left in the store besides its files goes too.
  const taskId = newId();
  await cluster.app.db.query(
    `INSERT INTO tasks (id, type, organization_id, subject_id, state) VALUES ($1, 'analyze-video', $2, $3, 'completed')`,
    [taskId, a.org.id, aOld],
  );
  const leftover = `orgs/${a.org.id}/tasks/${taskId}/transcript.json`;
  await cluster.app.store.put(leftover, Buffer.from('{}'));

  const aBefore = await usedBytes(a.org.id);
  const bBefore = await usedBytes(b.org.id);
  const report = await archiveExpiredJobs(cluster.app, new Date());
  t.deepEqual(report, { archivedJobs: 3, deletedFiles: 6, freedBytes: 6400 + 30_000 });

  t.is(await usedBytes(a.org.id), aBefore - 6400);
  t.is(await usedBytes(b.org.id), bBefore - 30_000);
  for (const f of [...aOldFiles, ...aFailedFiles, ...bOldFiles]) {
    t.is(await cluster.app.store.stat(f.objectKey), null, f.name);
    t.is(await cluster.app.db.one('SELECT id FROM files WHERE id = $1', [f.id]), undefined);
  }
  t.is(await cluster.app.store.stat(leftover), null);
  for (const f of [...aRecentFiles, ...aStuckFiles, ...aLibrary, ...bKeptFiles])
    t.truthy(await cluster.app.store.stat(f.objectKey), f.name);

  for (const [key, id, status] of [
    [a.key, aOld, 404],
    [a.key, aOldFailed, 404],
    [a.key, aRecent, 200],
    [a.key, aStuck, 200],
    [b.key, bOld, 404],
    [b.key, bKept, 200],
  ] as const) {
    const r = await cluster.api('GET', `/api/jobs/${id}`, { key });
    t.is(r.status, status, id);
  }
  const list = await cluster.api('GET', '/api/jobs?status=all', { key: a.key });
  t.deepEqual(list.body.data.map((j: { id: string }) => j.id).sort(), [aRecent, aStuck].sort());
  const files = await cluster.api('GET', '/api/uploads/files', { key: a.key });
  t.is(files.body.total, 3);
  const row = await cluster.app.db.one<{ archived_at: Date | null }>('SELECT archived_at FROM jobs WHERE id = $1', [aOld]);
  t.truthy(row!.archived_at);

  // Nothing more is due; a second run changes nothing.
  t.deepEqual(await archiveExpiredJobs(cluster.app, new Date()), { archivedJobs: 0, deletedFiles: 0, freedBytes: 0 });
  t.is(await usedBytes(a.org.id), aBefore - 6400);

  // A file written for an archived job afterwards (a render finishing late) is taken on the next run.
  const late = await addJobFiles(a.org.id, aOld, [77]);
  t.deepEqual(await archiveExpiredJobs(cluster.app, new Date()), { archivedJobs: 0, deletedFiles: 1, freedBytes: 77 });
  t.is(await cluster.app.store.stat(late[0]!.objectKey), null);

  // Time moves on: the job kept by the 90-day default goes when it is old enough.
  const future = await archiveExpiredJobs(cluster.app, new Date(Date.now() + 31 * DAY));
  t.is(future.archivedJobs, 2); // aRecent (30-day retention) and bKept; aStuck is still PROCESSING
  t.is(await usedBytes(b.org.id), 0);
});

test('the archive and orphan sweep run as daily pg-boss cron jobs, the abandoned-upload sweep every ten minutes', async (t) => {
  const rows = await cluster.app.db.query<{ name: string; cron: string; timezone: string }>(
    'SELECT name, cron, timezone FROM pgboss.schedule ORDER BY name',
  );
  const byName = Object.fromEntries(rows.map((r) => [r.name, r.cron]));
  t.regex(byName[ARCHIVE_QUEUE] ?? '', /^\d+ \d+ \* \* \*$/);
  t.regex(byName[SWEEP_QUEUE] ?? '', /^\d+ \d+ \* \* \*$/);
  // Not only when the same organization starts another upload: abandoned uploads go on a schedule.
  t.is(byName[UPLOAD_SWEEP_QUEUE], '*/10 * * * *');
  t.is(rows.find((r) => r.name === UPLOAD_SWEEP_QUEUE)?.timezone, 'UTC');
});
