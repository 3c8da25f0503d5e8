// Time from enqueue to task start on an idle agent, and leases per second with N fake agents.
//   npm run bench:lease-latency -- [agents=8] [tasks=500]
// Uses the test Postgres (TEST_DATABASE_URL or local, else embedded) and a real coordinator.
import { performance } from 'node:perf_hooks';
import { startCluster } from '../test/helpers/cluster.js';
import { FakeAgent, probeResult } from '../test/helpers/fake-agent.js';
import { enqueueProbe } from '../coordinator/src/probes/probes.js';

const agentsN = Number(process.argv[2] ?? 8);
const tasksN = Number(process.argv[3] ?? 500);

function stats(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  return { n: s.length, p50: q(0.5).toFixed(2), p95: q(0.95).toFixed(2), max: s[s.length - 1]!.toFixed(2) };
}

const cluster = await startCluster('bench_lease');
try {
  const { org } = await cluster.org();
  const enqueue = () => enqueueProbe(cluster.app.db.pool, cluster.app.queue, org.id, 'http://example.invalid/bench');

  // 1. Idle agent blocked in a long-poll; enqueue; measure until the lease returns to the agent.
  const idle = await new FakeAgent(cluster.app.grpcAddress, undefined, 'idle').register();
  const latencies: number[] = [];
  for (let i = 0; i < 50; i++) {
    const leasing = idle.lease(5000);
    await new Promise((r) => setTimeout(r, 20)); // the agent is waiting before the task exists
    const t0 = performance.now();
    await enqueue();
    const task = await leasing;
    latencies.push(performance.now() - t0);
    await idle.complete(task!.task_id, task!.lease_token, probeResult('bench'));
  }
  idle.close();

  // 2. Throughput: N agents lease and complete as fast as they can.
  const agents = await Promise.all(
    Array.from({ length: agentsN }, (_, i) => new FakeAgent(cluster.app.grpcAddress, undefined, `fake-${i}`).register()),
  );
  for (let i = 0; i < tasksN; i++) await enqueue();
  const t0 = performance.now();
  let done = 0;
  await Promise.all(
    agents.map(async (a) => {
      for (;;) {
        const task = await a.lease(200);
        if (!task) return;
        await a.complete(task.task_id, task.lease_token, probeResult('bench'));
        done++;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  agents.forEach((a) => a.close());

  console.log(
    JSON.stringify(
      {
        enqueueToLeaseMs: stats(latencies),
        throughput: {
          agents: agentsN,
          tasks: done,
          seconds: Number(seconds.toFixed(2)),
          leasesPerSecond: Number((done / seconds).toFixed(1)),
        },
      },
      null,
      2,
    ),
  );
} finally {
  await cluster.close();
}
