// bench:farm's one-job round (issue 22): one long 1080x1920 render (VIRAL captions), first on one
// agent pinned to core 0, then on two agents pinned to cores 0 and 1, where the coordinator splits it
// into two chunks (RENDER_CHUNK_MIN_SEC is set low for the bench). Every process an agent starts
// (ffmpeg) inherits its core. Prints each round's wall time, from the API's create to `done`, and
// its time on idle cores (cpu-clock.ts), which other work on the machine does not change.
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startCluster, waitFor, type AgentProcess } from '../test/helpers/cluster.js';
import { insertCompletedJob } from '../test/helpers/completed-job.js';
import { FFMPEG } from '../test/helpers/media.js';
import { idleCoreSeconds, leaseSpans, startCpuSampler } from './cpu-clock.js';

const r2 = (n: number) => Math.round(n * 100) / 100;

/** Pins the agent (and what it starts from now on) to one core. */
function pin(agent: AgentProcess, core: number): void {
  execFileSync('taskset', ['-a', '-cp', String(core), String(agent.proc.pid)], { stdio: 'ignore' });
}

export async function benchChunkedRender(seconds: number): Promise<void> {
  const cluster = await startCluster('bench_farm_chunked', {
    renderActiveLimit: 10_000,
    timers: false,
    renderChunkMinSec: 10,
    renderChunkSec: 10,
  });
  try {
    const { org, key } = await cluster.org({ plan: 'business', credits: 1000 });
    const source = path.join(cluster.dataDir, 'source.mp4');
    execFileSync(FFMPEG, [
      '-y',
      '-hide_banner',
      '-loglevel',
      'error',
      '-f',
      'lavfi',
      '-i',
      `testsrc2=s=1920x1080:r=30:d=${seconds + 1}`,
      '-f',
      'lavfi',
      '-i',
      `sine=frequency=440:duration=${seconds + 1}`,
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-shortest',
      source,
    ]);
    const words = Array.from({ length: Math.floor(seconds / 0.4) }, (_, i) => ({ text: `word${i}`, start: i * 0.4, end: i * 0.4 + 0.35 }));
    const jobId = await insertCompletedJob(cluster.app, {
      organizationId: org.id,
      sourcePath: source,
      words,
      shorts: [{ startTime: 0, endTime: seconds }],
      width: 1920,
      height: 1080,
    });
    const env = { AGENT_TASK_TYPES: 'render-short,render-chunk', MAX_CONCURRENT_TASKS: '1', LOG_LEVEL: 'info' };

    const renderOnce = async (
      agents: AgentProcess[],
    ): Promise<{ seconds: number; chunks: number; steps: string; idleCoreSec: number; perAgentSec: number[] }> => {
      const sampler = startCpuSampler(agents.map((a) => a.proc.pid!));
      const t0 = performance.now();
      const r = await cluster.api('POST', '/api/render', {
        key,
        body: { id: jobId, target: 0, preset: 'VIRAL', size: { width: 1080, height: 1920 } },
      });
      if (r.status !== 201) throw new Error(`render: ${r.status} ${JSON.stringify(r.body)}`);
      const done = await waitFor(
        async () => {
          const s = await cluster.api('GET', `/api/render/${r.body.renderId}`, { key });
          return s.body.type === 'done' || s.body.type === 'error' ? s.body : undefined;
        },
        60 * 60_000,
        'render',
      );
      if (done.type !== 'done') throw new Error(`render failed: ${JSON.stringify(done)}`);
      const wall = (performance.now() - t0) / 1000;
      sampler.stop();
      const idleCoreSec = idleCoreSeconds(
        await leaseSpans(cluster.app.db, r.body.renderId),
        agents.map((a) => a.name),
        sampler,
      );
      const cpu = { idleCoreSec, perAgentSec: agents.map((_, i) => sampler.total(i)) };
      const chunks = (await cluster.app.db.query(`SELECT 1 FROM tasks WHERE subject_id = $1 AND parent_id IS NOT NULL`, [r.body.renderId]))
        .length;
      // Where the time went: each lease of the render's tasks, from the create, on which agent.
      const events = await cluster.app.db.query<{ part: number | null; kind: string; at: number; agent: string | null }>(
        `SELECT t.child_index AS part, e.kind, EXTRACT(EPOCH FROM e.created_at - r.created_at)::float8 AS at, a.name AS agent
           FROM task_events e JOIN tasks t ON t.id = e.task_id JOIN renders r ON r.id = t.subject_id LEFT JOIN agents a ON a.id = e.agent_id
          WHERE t.subject_id = $1 AND e.kind IN ('leased', 'fanned_out', 'joining', 'completed') ORDER BY e.created_at`,
        [r.body.renderId],
      );
      const steps = events
        .map((e) => `${e.part === null ? 'render' : `chunk ${e.part + 1}`} ${e.kind} ${r2(e.at)} s${e.agent ? ` (${e.agent})` : ''}`)
        .join('; ');
      return { seconds: wall, chunks, steps, ...cpu };
    };

    const first = await cluster.startAgent(env);
    pin(first, 0);
    const one = await renderOnce([first]);
    console.error(
      `1 agent (core 0): ${r2(one.seconds)} s wall, ${r2(one.idleCoreSec)} s on an idle core, ${r2(one.perAgentSec[0]!)} CPU-s, ${one.chunks} chunks: ${one.steps}`,
    );
    const second = await cluster.startAgent(env);
    pin(second, 1 % os.cpus().length);
    const two = await renderOnce([first, second]);
    console.error(
      `2 agents (cores 0, 1): ${r2(two.seconds)} s wall, ${r2(two.idleCoreSec)} s on idle cores, ${two.perAgentSec.map(r2).join(' + ')} CPU-s, ${two.chunks} chunks: ${two.steps}`,
    );
    const rounds = [
      {
        agents: 1,
        chunks: one.chunks,
        'wall s': r2(one.seconds),
        'on idle cores s': r2(one.idleCoreSec),
        'agents CPU-s': r2(one.perAgentSec[0]!),
      },
      {
        agents: 2,
        chunks: two.chunks,
        'wall s': r2(two.seconds),
        'on idle cores s': r2(two.idleCoreSec),
        'agents CPU-s': two.perAgentSec.map(r2).join(' + '),
        'speed-up (wall)': r2(one.seconds / two.seconds),
        'speed-up (idle cores)': r2(one.idleCoreSec / two.idleCoreSec),
      },
    ];
    console.table(rounds);
    console.log(
      JSON.stringify(
        { cores: os.cpus().length, loadAverage: os.loadavg().map(r2), renderSec: seconds, output: '1080x1920', rounds },
        null,
        2,
      ),
    );
  } finally {
    await cluster.close();
  }
}
