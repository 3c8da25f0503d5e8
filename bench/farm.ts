// A farm on this machine: N real agent processes rendering a queue of short real renders.
// Prints, for 1..N agents, throughput, queue wait percentiles and the speed-up over one agent.
//   npm run bench:farm -- [max agents=4] [renders per round=12] [seconds per short=2]
// One job on the farm (issue 22): a single long 1080x1920 render on 1 agent pinned to one core
// (`taskset`), then on 2 agents each pinned to its own core, where it is rendered in 2 chunks; in
// alternating pairs of such rounds, the median pair's speed-up the figure.
//   npm run bench:farm -- chunked [seconds=60] [pairs=3]
// The shorts users make, with the default settings, on 1 and 2 pinned agents (issue 35; farm-shorts.ts):
//   npm run bench:farm -- shorts [pairs=3] [width=1080] [height=1920] [only the cases whose name holds this]
// Uses the test Postgres (TEST_DATABASE_URL or local, else embedded). Each agent has one slot, so
// N agents run N ffmpeg encodes at once: on a machine with C cores throughput stops growing near C.
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startCluster, waitFor } from '../test/helpers/cluster.js';
import { insertCompletedJob } from '../test/helpers/completed-job.js';
import { makeTestVideo } from '../test/helpers/media.js';

if (process.argv[2] === 'shorts') {
  const { benchShorts } = await import('./farm-shorts.js');
  const [pairs, width, height] = [3, 1080, 1920].map((d, i) => Number(process.argv[3 + i] ?? d));
  await benchShorts(pairs, { width, height }, process.argv[6]);
  process.exit(0);
}
if (process.argv[2] === 'chunked') {
  const { benchChunkedRender } = await import('./farm-chunked.js');
  await benchChunkedRender(Number(process.argv[3] ?? 60), Number(process.argv[4] ?? 3));
  process.exit(0);
}

const maxAgents = Number(process.argv[2] ?? 4);
const perRound = Number(process.argv[3] ?? 12);
const shortSec = Number(process.argv[4] ?? 2);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))]! : NaN;
};
const r2 = (n: number) => Math.round(n * 100) / 100;

const cluster = await startCluster('bench_farm', { renderActiveLimit: 10_000, timers: false });
try {
  const { org, key } = await cluster.org({ plan: 'business', credits: 1000 });
  const source = await makeTestVideo(path.join(cluster.dataDir, 'source.mp4'), { seconds: shortSec + 1, width: 640, height: 360 });
  const words = [
    { text: 'one', start: 0.2, end: 0.8 },
    { text: 'two', start: 0.9, end: 1.5 },
  ];
  const jobId = await insertCompletedJob(cluster.app, {
    organizationId: org.id,
    sourcePath: source,
    words,
    shorts: [{ startTime: 0, endTime: shortSec }],
    width: 640,
    height: 360,
  });

  const rounds: Array<Record<string, number>> = [];
  let running = 0;
  for (let agents = 1; agents <= maxAgents; agents = agents < 4 ? agents + 1 : agents * 2) {
    // Add agents up to this round's count; they stay for the next round.
    await Promise.all(
      Array.from({ length: agents - running }, () =>
        cluster.startAgent({ AGENT_TASK_TYPES: 'render-short,render-chunk', MAX_CONCURRENT_TASKS: '1', LOG_LEVEL: 'info' }),
      ),
    );
    running = agents;
    const t0 = performance.now();
    const ids: string[] = [];
    for (let i = 0; i < perRound; i++) {
      const r = await cluster.api('POST', '/api/render', {
        key,
        body: { id: jobId, target: 0, preset: 'VIRAL', size: { width: 360, height: 640 } },
      });
      if (r.status !== 201) throw new Error(`render: ${r.status} ${JSON.stringify(r.body)}`);
      ids.push(r.body.renderId);
    }
    await waitFor(
      async () => {
        const n = await cluster.app.db.one<{ n: number }>(
          `SELECT count(*)::int AS n FROM renders WHERE id = ANY($1) AND status IN ('done', 'error')`,
          [ids],
        );
        return n!.n === ids.length;
      },
      30 * 60_000,
      'renders',
    );
    const seconds = (performance.now() - t0) / 1000;
    const failed = (await cluster.app.db.one<{ n: number }>(
      `SELECT count(*)::int AS n FROM renders WHERE id = ANY($1) AND status = 'error'`,
      [ids],
    ))!.n;
    const tasks = await cluster.app.db.query<{ waitSec: number; runSec: number }>(
      `SELECT EXTRACT(EPOCH FROM started_at - queued_at)::float8 AS "waitSec", EXTRACT(EPOCH FROM finished_at - started_at)::float8 AS "runSec"
         FROM tasks WHERE type = 'render-short' AND subject_id = ANY($1)`,
      [ids],
    );
    const waits = tasks.map((t) => t.waitSec);
    const runs = tasks.map((t) => t.runSec);
    rounds.push({
      agents,
      renders: ids.length,
      failed,
      seconds: r2(seconds),
      'renders/min': r2(((ids.length - failed) / seconds) * 60),
      'wait p50 s': r2(pct(waits, 0.5)),
      'wait p95 s': r2(pct(waits, 0.95)),
      'wait max s': r2(Math.max(...waits)),
      'run p50 s': r2(pct(runs, 0.5)),
    });
    console.error(`round with ${agents} agent(s): ${r2(seconds)} s`);
  }
  const base = rounds[0]!['renders/min']!;
  for (const r of rounds) r['speed-up'] = r2(r['renders/min']! / base);
  console.table(rounds);
  console.log(JSON.stringify({ cores: os.cpus().length, loadAverage: os.loadavg().map(r2), shortSec, output: '360x640', rounds }, null, 2));
} finally {
  await cluster.close();
}
