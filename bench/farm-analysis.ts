// One job, not a queue: a generated talk's analysis in ranges (issue 22) on 1 agent, then on 2
// agents, each agent pinned to one core with taskset so that the speed-up is the farm's, not the
// machine's other core. Also the same job analysed whole on one pinned agent, for comparison.
//   npm run bench:farm:analysis -- [minutes=20] [range seconds=300] [--no-ranges-on-one]
// Each round reports its wall time and its time on idle cores (cpu-clock.ts), which other work on
// the machine does not change.
// Uses the test Postgres (TEST_DATABASE_URL or local). Needs taskset (util-linux) and 2 cores.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startCluster, type TestCluster } from '../test/helpers/cluster.js';
import { idleCoreSeconds, leaseSpans, startCpuSampler } from './cpu-clock.js';
import { serveFiles } from '../test/helpers/media.js';
import { makeTalkVideo, TALK } from '../test/helpers/talk-video.js';

const minutes = Number(process.argv[2] ?? 20);
const rangeSec = Number(process.argv[3] ?? 300);
// `--no-ranges-on-one`: only the whole-file round and the two-agent round (the comparison).
const skipRangesOnOne = process.argv.includes('--no-ranges-on-one');

const EXTRA = [
  'Let me tell you about the three mistakes every beginner makes.',
  'The first mistake is trying to learn everything at once.',
  'Why does that fail so often?',
  'Because attention is limited and memory needs repetition.',
  'The second mistake is skipping the basics for the exciting parts.',
  'Twenty percent of the effort gives eighty percent of the result.',
  'The third mistake is giving up after one bad week.',
  'Progress is never a straight line, and that is fine.',
];
const r1 = (n: number) => Math.round(n * 10) / 10;

/** Pins an agent process (and the pocketsphinx and ffmpeg it starts, which inherit it) to one core. */
function pin(cluster: TestCluster, core: number): void {
  const pid = cluster.agents.at(-1)!.proc.pid!;
  execFileSync('taskset', ['-a', '-p', '-c', String(core), String(pid)]);
}

interface Round {
  seconds: number;
  tasks: number;
  /** The job's time with each agent alone on its core (cpu-clock.ts), and each agent's CPU time. */
  idleCoreSec: number;
  perAgentSec: number[];
}

async function round(name: string, overrides: Record<string, number>, agents: number, fileUrl: string): Promise<Round> {
  const cluster = await startCluster(`bench_farm_analysis_${name}`, overrides);
  try {
    for (let i = 0; i < agents; i++) {
      await cluster.startAgent({
        AGENT_TASK_TYPES: 'analyze-video,analyze-range,reframe-short',
        MAX_CONCURRENT_TASKS: '1',
        LOG_LEVEL: 'info',
      });
      pin(cluster, i);
    }
    const { key } = await cluster.org({ plan: 'business', credits: 1000 });
    const sampler = startCpuSampler(cluster.agents.map((a) => a.proc.pid!));
    const t0 = performance.now();
    const created = await cluster.api('POST', '/api/jobs', { key, body: { functionName: 'VideoShorts', fileUrl } });
    const job = await cluster.settledJob(key, created.body.id, { timeoutMs: 4 * 3600_000 });
    const seconds = (performance.now() - t0) / 1000;
    sampler.stop();
    if (job.status !== 'COMPLETED') throw new Error(`${name}: ${job.message}`);
    const spans = await leaseSpans(cluster.app.db, created.body.id);
    const cpu = {
      idleCoreSec: idleCoreSeconds(
        spans,
        cluster.agents.map((a) => a.name),
        sampler,
      ),
      perAgentSec: cluster.agents.map((_, i) => sampler.total(i)),
    };
    // Where the time went: each lease, on which agent, its wall and CPU time.
    for (const s of spans) {
      const i = cluster.agents.findIndex((a) => a.name === s.agent);
      const cpuSec = sampler.cpuAt(i, s.endMs) - sampler.cpuAt(i, s.startMs);
      console.error(`  ${s.type} on ${s.agent}: ${r1((s.endMs - s.startMs) / 1000)} s wall, ${r1(cpuSec)} CPU-s`);
    }
    if (process.env.BENCH_LOG_DIR) {
      mkdirSync(process.env.BENCH_LOG_DIR, { recursive: true });
      for (const a of cluster.agents) writeFileSync(path.join(process.env.BENCH_LOG_DIR, `${name}-${a.name}.log`), a.logs.join('\n'));
    }
    const tasks = (await cluster.app.db.one<{ n: number }>(`SELECT count(*)::int AS n FROM tasks WHERE subject_id = $1`, [
      created.body.id,
    ]))!.n;
    console.error(
      `${name}: ${r1(seconds)} s wall, ${r1(cpu.idleCoreSec)} s on idle cores, agents' CPU ${cpu.perAgentSec.map(r1).join(' + ')} s, ${tasks} task(s)`,
    );
    return { seconds, tasks, ...cpu };
  } finally {
    await cluster.close();
  }
}

const phrases: typeof TALK = [];
const pool = [...TALK, ...EXTRA.map((text) => ({ text, pauseAfter: 0.9 }))];
for (let i = 0; phrases.length < (minutes * 60) / 4; i++) phrases.push(pool[i % pool.length]!);
const scratch = await startCluster('bench_farm_analysis_media');
const talk = await makeTalkVideo(scratch.dataDir, { phrases });
const media = await serveFiles({ 'talk.mp4': talk.videoPath });
try {
  const url = media.url('talk.mp4');
  const ranged = { analysisRangeMinSec: 1, analysisRangeSec: rangeSec };
  const loadBefore = os.loadavg().map(r1);
  const whole = await round('whole_1', { analysisRangeMinSec: 0 }, 1, url);
  const one = skipRangesOnOne ? undefined : await round('ranges_1', ranged, 1, url);
  const two = await round('ranges_2', ranged, 2, url);
  const r2 = (n: number) => Math.round(n * 100) / 100;
  console.log(
    JSON.stringify(
      {
        sourceSec: r1(talk.durationSec),
        rangeSec,
        tasks: two.tasks,
        wall: {
          wholeOnOneAgentSec: r1(whole.seconds),
          rangesOnOneAgentSec: one && r1(one.seconds),
          rangesOnTwoAgentsSec: r1(two.seconds),
          speedUpTwoOverWhole: r2(whole.seconds / two.seconds),
          speedUpTwoOverOne: one && r2(one.seconds / two.seconds),
        },
        onIdleCores: {
          wholeOnOneAgentSec: r1(whole.idleCoreSec),
          rangesOnOneAgentSec: one && r1(one.idleCoreSec),
          rangesOnTwoAgentsSec: r1(two.idleCoreSec),
          speedUpTwoOverWhole: r2(whole.idleCoreSec / two.idleCoreSec),
          speedUpTwoOverOne: one && r2(one.idleCoreSec / two.idleCoreSec),
        },
        agentsCpuSec: { whole: whole.perAgentSec.map(r1), rangesOnOne: one?.perAgentSec.map(r1), rangesOnTwo: two.perAgentSec.map(r1) },
        loadAverage: { before: loadBefore, after: os.loadavg().map(r1) },
      },
      null,
      2,
    ),
  );
} finally {
  await media.close();
  await scratch.close();
}
