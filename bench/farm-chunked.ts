// bench:farm's one-job round (issue 22): one long 1080x1920 render (VIRAL captions), on one agent
// pinned to core 0, then on two agents pinned to cores 0 and 1, where the coordinator splits it into
// two chunks (RENDER_CHUNK_MIN_SEC is set low for the bench); in pairs of such rounds, alternating. Every process an agent starts
// (ffmpeg) inherits its core. Prints each round's wall time, from the API's create to `done`, and
// its time on idle cores (cpu-clock.ts), which other work on the machine does not change.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startCluster, type AgentProcess, type TestCluster } from '../test/helpers/cluster.js';
import { insertCompletedJob } from '../test/helpers/completed-job.js';
import { makeTestVideo } from '../test/helpers/media.js';
import { idleCoreSeconds, leaseSpans, startCpuSampler } from './cpu-clock.js';
import { pin, startPinnedPair } from './pinned-agents.js';
import { renderDone } from './render-done.js';

const r2 = (n: number) => Math.round(n * 100) / 100;

/** A farm (coordinator, no agents yet) holding one completed job whose one short is `seconds` of 1080p. */
async function farmWithJob(name: string, seconds: number, chunks: boolean): Promise<{ cluster: TestCluster; key: string; jobId: string }> {
  const cluster = await startCluster(name, {
    renderActiveLimit: 10_000,
    timers: false,
    renderChunkMinSec: chunks ? 10 : 0,
    renderChunkSec: 10,
  });
  const { org, key } = await cluster.org({ plan: 'business', credits: 1000 });
  const source = path.join(cluster.dataDir, 'source.mp4');
  await makeTestVideo(source, { seconds: seconds + 1, width: 1920, height: 1080, fps: 30, pattern: 'testsrc2' });
  const words = Array.from({ length: Math.floor(seconds / 0.4) }, (_, i) => ({ text: `word${i}`, start: i * 0.4, end: i * 0.4 + 0.35 }));
  const jobId = await insertCompletedJob(cluster.app, {
    organizationId: org.id,
    sourcePath: source,
    words,
    shorts: [{ startTime: 0, endTime: seconds }],
    width: 1920,
    height: 1080,
  });
  return { cluster, key, jobId };
}

/** Starts the VIRAL 1080x1920 render of the farm's short; its id. */
async function startRender(farm: { cluster: TestCluster; key: string; jobId: string }): Promise<string> {
  const r = await farm.cluster.api('POST', '/api/render', {
    key: farm.key,
    body: { id: farm.jobId, target: 0, preset: 'VIRAL', size: { width: 1080, height: 1920 } },
  });
  if (r.status !== 201) throw new Error(`render: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.renderId as string;
}

/** Seconds from the first render's create (the API's 201) to the last one's completion, as the
 *  coordinator recorded them. */
async function renderSeconds(farm: { cluster: TestCluster }, renderIds: string[]): Promise<number> {
  const row = await farm.cluster.app.db.one<{ seconds: number }>(
    `SELECT EXTRACT(EPOCH FROM max(e.created_at) - min(r.created_at))::float8 AS seconds
       FROM renders r JOIN tasks t ON t.subject_id = r.id AND t.parent_id IS NULL JOIN task_events e ON e.task_id = t.id AND e.kind = 'completed'
      WHERE r.id = ANY($1::text[])`,
    [renderIds],
  );
  return row!.seconds;
}

type Farm = Awaited<ReturnType<typeof farmWithJob>>;

/** Where the time went: each lease of the render's tasks, from the create, on which agent. */
async function renderSteps(cluster: TestCluster, renderId: string): Promise<string> {
  const events = await cluster.app.db.query<{ part: number | null; kind: string; at: number; agent: string | null }>(
    `SELECT t.child_index AS part, e.kind, EXTRACT(EPOCH FROM e.created_at - r.created_at)::float8 AS at, a.name AS agent
       FROM task_events e JOIN tasks t ON t.id = e.task_id JOIN renders r ON r.id = t.subject_id LEFT JOIN agents a ON a.id = e.agent_id
      WHERE t.subject_id = $1 AND e.kind IN ('leased', 'fanned_out', 'joining', 'completed') ORDER BY e.created_at`,
    [renderId],
  );
  return events
    .map((e) => `${e.part === null ? 'render' : `chunk ${e.part + 1}`} ${e.kind} ${r2(e.at)} s${e.agent ? ` (${e.agent})` : ''}`)
    .join('; ');
}

/** One render on `agents` (the farm's others drained): its wall time, chunks, steps and CPU. */
async function renderOnce(
  farm: Farm,
  agents: AgentProcess[],
): Promise<{ seconds: number; chunks: number; steps: string; idleCoreSec: number; perAgentSec: number[] }> {
  const { cluster } = farm;
  const sampler = startCpuSampler(agents.map((a) => a.proc.pid!));
  const logsFrom = new Map(agents.map((a) => [a, a.logs.length]));
  const renderId = await startRender(farm);
  await renderDone(farm.cluster, farm.key, renderId);
  const wall = await renderSeconds(farm, [renderId]);
  sampler.stop();
  const idleCoreSec = idleCoreSeconds(
    await leaseSpans(cluster.app.db, renderId),
    agents.map((a) => a.name),
    sampler,
  );
  const cpu = { idleCoreSec, perAgentSec: agents.map((_, i) => sampler.total(i)) };
  const chunks = (await cluster.app.db.query(`SELECT 1 FROM tasks WHERE subject_id = $1 AND parent_id IS NOT NULL`, [renderId])).length;
  const steps = await renderSteps(cluster, renderId);
  // The agents' own logs of the round (stages with their times), for a closer look.
  if (process.env.BENCH_LOG_DIR) {
    mkdirSync(process.env.BENCH_LOG_DIR, { recursive: true });
    for (const a of agents)
      writeFileSync(path.join(process.env.BENCH_LOG_DIR, `chunked-${renderId}-${a.name}.log`), a.logs.slice(logsFrom.get(a)).join('\n'));
  }
  return { seconds: wall, chunks, steps, ...cpu };
}

/** The same render twice at once on the unsplit farm, one on each agent. */
async function twoAtOnce(unsplit: Farm, agents: [AgentProcess, AgentProcess]): Promise<{ seconds: number; perAgentSec: number[] }> {
  const sampler = startCpuSampler(agents.map((a) => a.proc.pid!));
  const ids = await Promise.all([startRender(unsplit), startRender(unsplit)]);
  await Promise.all(ids.map((id) => renderDone(unsplit.cluster, unsplit.key, id)));
  const seconds = await renderSeconds(unsplit, ids);
  sampler.stop();
  return { seconds, perAgentSec: [0, 1].map((i) => sampler.total(i)) };
}

interface PairRun {
  one: Awaited<ReturnType<typeof renderOnce>>;
  two: Awaited<ReturnType<typeof renderOnce>>;
  both: Awaited<ReturnType<typeof twoAtOnce>>;
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** The pairs' table, and the figures as JSON: the medians of the ceiling and of the speed-ups. */
function reportPairs(seconds: number, pairsRun: PairRun[]): void {
  const rounds = pairsRun.map(({ one, two, both }, i) => ({
    pair: i + 1,
    '1 agent: wall s': r2(one.seconds),
    '1 agent: idle cores s': r2(one.idleCoreSec),
    '2 agents: chunks': two.chunks,
    '2 agents: wall s': r2(two.seconds),
    '2 agents: idle cores s': r2(two.idleCoreSec),
    '2 agents: CPU-s': two.perAgentSec.map(r2).join(' + '),
    'speed-up (wall)': r2(one.seconds / two.seconds),
    'speed-up (idle cores)': r2(one.idleCoreSec / two.idleCoreSec),
    'two at once: wall s': r2(both.seconds),
    'ceiling (2 x 1 agent / two at once)': r2((2 * one.seconds) / both.seconds),
  }));
  console.table(rounds);
  console.log(
    JSON.stringify(
      {
        cores: os.cpus().length,
        loadAverage: os.loadavg().map(r2),
        renderSec: seconds,
        output: '1080x1920',
        rounds,
        medianCeiling: r2(median(rounds.map((r) => r['ceiling (2 x 1 agent / two at once)']))),
        medianSpeedUp: {
          wall: r2(median(rounds.map((r) => r['speed-up (wall)']))),
          idleCores: r2(median(rounds.map((r) => r['speed-up (idle cores)']))),
        },
      },
      null,
      2,
    ),
  );
}

export async function benchChunkedRender(seconds: number, pairs = 1): Promise<void> {
  const farm = await farmWithJob('bench_farm_chunked', seconds, true);
  // The ceiling's farm never splits a render.
  const unsplit = await farmWithJob('bench_farm_unsplit', seconds, false);
  const { cluster } = farm;
  try {
    const env = { AGENT_TASK_TYPES: 'render-short,render-chunk', MAX_CONCURRENT_TASKS: '1', LOG_LEVEL: 'info' };
    // Both agents run from the start; the second is drained (no lease, no free slot) for the
    // one-agent rounds. Rounds alternate in pairs, so that a slower minute of this shared machine
    // weighs on both sides of a ratio: the figure is the pairs' median.
    const { first, second, drainSecond } = await startPinnedPair(cluster, env);
    // What this machine gives two pinned cores at once: the same render twice at once, unsplit (a
    // farm of its own that never splits), one on each core. Each takes longer than alone when the
    // cores share caches and memory: the most that splitting one render could gain here is twice
    // the solo time over this.
    const [firstUnsplit, secondUnsplit] = [await unsplit.cluster.startAgent(env), await unsplit.cluster.startAgent(env)];
    pin(firstUnsplit, 0);
    pin(secondUnsplit, 1 % os.cpus().length);
    const pairsRun: PairRun[] = [];
    for (let pair = 1; pair <= pairs; pair++) {
      await drainSecond(true);
      const one = await renderOnce(farm, [first]);
      console.error(
        `pair ${pair}, 1 agent (core 0): ${r2(one.seconds)} s wall, ${r2(one.idleCoreSec)} s on an idle core, ${r2(one.perAgentSec[0]!)} CPU-s, ${one.chunks} chunks: ${one.steps}`,
      );
      await drainSecond(false);
      const two = await renderOnce(farm, [first, second]);
      console.error(
        `pair ${pair}, 2 agents (cores 0, 1): ${r2(two.seconds)} s wall, ${r2(two.idleCoreSec)} s on idle cores, ${two.perAgentSec.map(r2).join(' + ')} CPU-s, ${two.chunks} chunks: ${two.steps}`,
      );
      const both = await twoAtOnce(unsplit, [firstUnsplit, secondUnsplit]);
      console.error(
        `pair ${pair}, the whole render twice at once, one per agent: ${r2(both.seconds)} s wall, ${both.perAgentSec.map(r2).join(' + ')} CPU-s`,
      );
      pairsRun.push({ one, two, both });
    }
    reportPairs(seconds, pairsRun);
  } finally {
    await Promise.all([cluster.close(), unsplit.cluster.close()]);
  }
}
