// The API under load: requests/s and p50/p99 latency at 100 concurrent connections for job list, job
// get, render status and file list, against a real coordinator and Postgres, each compared with
// /healthz (no auth, no database) measured the same way in the same run.
//   npm run bench:load -- [seconds per route=10] [connections=100] [only routes matching, e.g. "job get"]
// Uses the test Postgres (TEST_DATABASE_URL or local, else embedded). The coordinator runs in this
// process; autocannon fires from a worker thread so the two do not share one event loop.
import autocannon from 'autocannon';
import { startCluster } from '../test/helpers/cluster.js';
import { insertCompletedJob } from '../test/helpers/completed-job.js';
import { insertFiles } from '../coordinator/src/files/files.js';

const seconds = Number(process.argv[2] ?? 10);
const connections = Number(process.argv[3] ?? 100);
const only = process.argv[4];

// File routes are rate limited per plan; the bench measures the service, not the limiter.
const cluster = await startCluster('bench_load', { rateLimitFilesPerMinute: '0,0,0,0', timers: false });
try {
  const { org, key } = await cluster.org({ plan: 'business', credits: 1000 });
  const words = [
    { text: 'hello', start: 0.5, end: 1 },
    { text: 'world', start: 1, end: 1.5 },
  ];
  const jobIds: string[] = [];
  for (let i = 0; i < 60; i++)
    jobIds.push(
      await insertCompletedJob(cluster.app, {
        organizationId: org.id,
        words,
        shorts: [
          { startTime: 0, endTime: 2 },
          { startTime: 2, endTime: 4 },
        ],
      }),
    );
  await cluster.app.db.tx((c) =>
    insertFiles(
      c,
      Array.from({ length: 40 }, (_, i) => ({
        organizationId: org.id,
        name: `upload-${i}.mp4`,
        type: 'video' as const,
        sizeBytes: 1000 + i,
        objectKey: `orgs/${org.id}/uploads/bench-${i}.mp4`,
      })),
    ),
  );
  // Queued renders (no agent runs here): the status answer includes the queue position.
  const render = await cluster.api('POST', '/api/render', {
    key,
    body: { id: jobIds[0], target: 0, preset: 'VIRAL', size: { width: 360, height: 640 } },
  });
  if (render.status !== 201) throw new Error(`render: ${render.status} ${JSON.stringify(render.body)}`);
  const jobId = jobIds[30]!;

  const routes: Array<{ name: string; path: string; auth: boolean }> = [
    { name: 'baseline /healthz', path: '/healthz', auth: false },
    { name: 'job list', path: '/api/jobs?limit=20', auth: true },
    { name: 'job get', path: `/api/jobs/${jobId}`, auth: true },
    { name: 'render status', path: `/api/render/${render.body.renderId}`, auth: true },
    { name: 'file list', path: '/api/uploads/files?limit=20', auth: true },
  ];
  for (const r of routes) {
    const check = await cluster.api('GET', r.path, r.auth ? { key } : {});
    if (check.status !== 200) throw new Error(`${r.name}: ${check.status} ${JSON.stringify(check.body)}`);
  }

  const rows: Array<Record<string, string | number>> = [];
  let baseline = 0;
  for (const r of routes) {
    if (only && !r.path.startsWith('/healthz') && !r.name.includes(only)) continue;
    // A short warm-up (JIT, pool connections), then the measured run.
    await autocannon({
      url: cluster.app.httpUrl + r.path,
      connections,
      duration: 2,
      workers: 1,
      headers: r.auth ? { authorization: `Bearer ${key}` } : {},
    });
    const res = await autocannon({
      url: cluster.app.httpUrl + r.path,
      connections,
      duration: seconds,
      workers: 1,
      headers: r.auth ? { authorization: `Bearer ${key}` } : {},
    });
    const rps = res.requests.total / res.duration;
    if (!baseline) baseline = rps;
    rows.push({
      route: r.name,
      'req/s': Math.round(rps),
      'p50 ms': res.latency.p50,
      'p99 ms': res.latency.p99,
      'non-2xx': res.non2xx + res.errors + res.timeouts,
      'vs baseline': Number((rps / baseline).toFixed(2)),
    });
  }
  console.table(rows);
  const get = rows.find((r) => r.route === 'job get')!;
  console.log(
    JSON.stringify(
      {
        connections,
        secondsPerRoute: seconds,
        goal: 'job get >= 2000 req/s with p99 <= 50 ms',
        met: Number(get['req/s']) >= 2000 && Number(get['p99 ms']) <= 50,
        rows,
      },
      null,
      2,
    ),
  );
} finally {
  await cluster.close();
}
