// A render through the API against a bare encode of the same crop (issue 35, item 5): a 45 s
// 1080x1920 short with VIRAL captions and a 300 px logo, rendered by one agent pinned to core 0, and
// a bare ffmpeg encode pinned to the same core, in pairs whose order alternates. Each render is
// broken down by stage from the coordinator's task events and the agent's own log (queue and lease,
// download, probe, loudness, caption script and graph, encode, thumbnail, upload, completion), and
// the CPU the coordinator (this process) and Postgres spent meanwhile is printed beside it.
//   npm run bench:render -- api [seconds=45] [pairs=3]
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { processMediaTools, toolEnv } from '@shorts/common/media/tools';
import { largestWindow } from '@shorts/common/reframe/camera';
import { startCluster } from '../test/helpers/cluster.js';
import { insertCompletedJob } from '../test/helpers/completed-job.js';
import { serveFiles } from '../test/helpers/media.js';
import { pin } from './pinned-agents.js';
import { renderDone } from './render-done.js';
import { makeLogo, makeSourceVideo } from './source-video.js';

const run = promisify(execFile);
// The ffmpeg an agent runs: FFMPEG_PATH, else a system ffmpeg >= 5, else the bundled build.
const FFMPEG = processMediaTools().ffmpegPath;
const seconds = Number(process.argv[3] ?? 45);
const pairs = Math.max(1, Number(process.argv[4] ?? 3));
const r2 = (n: number) => Math.round(n * 100) / 100;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** CPU seconds each Postgres process on this host has used so far (user + system), by pid. */
async function postgresCpu(): Promise<Map<string, number>> {
  const tick = 100; // USER_HZ on Linux
  const byPid = new Map<string, number>();
  for (const pid of await readdir('/proc').catch(() => [])) {
    if (!/^\d+$/.test(pid)) continue;
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    const m = /^\d+ \(([^)]*)\) (.*)$/.exec(stat.trim());
    if (!m || !/^postgres/.test(m[1]!)) continue;
    const fields = m[2]!.split(' ');
    byPid.set(pid, (Number(fields[11]) + Number(fields[12])) / tick);
  }
  return byPid;
}

/** What Postgres spent since `before` (processes that ended meanwhile are not counted). */
const postgresCpuSince = async (before: Map<string, number>): Promise<number> =>
  [...(await postgresCpu())].reduce((sum, [pid, sec]) => sum + sec - (before.get(pid) ?? 0), 0);

const cluster = await startCluster('bench_render_api', { renderActiveLimit: 10_000, timers: false });
try {
  const dir = cluster.dataDir;
  const source = await makeSourceVideo(FFMPEG, path.join(dir, 'source.mp4'), seconds + 2, 30);
  const logoFile = await makeLogo(path.join(dir, 'logo.png'));

  const logoServer = await serveFiles({ 'logo.png': logoFile });
  const { org, key } = await cluster.org({ plan: 'business', credits: 1000 });
  const words = Array.from({ length: Math.floor(seconds / 0.4) }, (_, i) => ({
    text: `word${i % 17}`,
    start: 1 + i * 0.4,
    end: 1 + i * 0.4 + 0.35,
  }));
  const jobId = await insertCompletedJob(cluster.app, {
    organizationId: org.id,
    sourcePath: source,
    words,
    shorts: [{ startTime: 1, endTime: 1 + seconds }],
    width: 1920,
    height: 1080,
  });
  const preset = await cluster.api('POST', '/api/organizations/brandings', {
    key,
    body: {
      name: 'bench',
      options: { waterMark: { waterMarkUrl: logoServer.url('logo.png'), left: '40px', top: '40px', width: '300px', opacity: '0.8' } },
    },
  });
  if (preset.status !== 201 && preset.status !== 200) throw new Error(`brand preset: ${preset.status} ${JSON.stringify(preset.body)}`);
  const waterMark = preset.body.options.waterMark as Record<string, unknown>;
  await logoServer.close();

  const agent = await cluster.startAgent({ AGENT_TASK_TYPES: 'render-short,render-chunk', LOG_LEVEL: 'debug' });
  pin(agent, 0);

  // The bare encode: the same crop (the render of a short with no framing path shows the largest
  // 9:16 window, centred), scale and encoder settings, no captions, no logo, no loudness.
  const window = largestWindow(1920, 1080, 9 / 16);
  const bareArgs = [
    ...['-hide_banner', '-nostdin', '-y', '-loglevel', 'error', '-ss', '1', '-to', String(1 + seconds), '-i', source],
    ...[
      '-vf',
      `crop=${window.width}:${window.height}:${(1920 - window.width) / 2}:0,scale=1080:1920:flags=bicubic,setsar=1,format=yuv420p`,
    ],
    ...['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '160k'],
    ...['-movflags', '+faststart', path.join(dir, 'bare.mp4')],
  ];
  const bare = async (): Promise<number> => {
    const t0 = performance.now();
    await run('taskset', ['-c', '0', FFMPEG, ...bareArgs], { env: toolEnv(), maxBuffer: 16 * 1024 * 1024 });
    return (performance.now() - t0) / 1000;
  };

  const render = async (): Promise<{ seconds: number; stages: Array<[string, number]>; coordinatorCpu: number; postgresCpu: number }> => {
    const cpu0 = process.cpuUsage();
    const pg0 = await postgresCpu();
    const logFrom = agent.logs.length;
    const created = await cluster.api('POST', '/api/render', {
      key,
      body: { id: jobId, target: 0, preset: 'VIRAL', size: { width: 1080, height: 1920 }, options: { waterMark } },
    });
    if (created.status !== 201) throw new Error(`render: ${created.status} ${JSON.stringify(created.body)}`);
    const renderId = created.body.renderId as string;
    await renderDone(cluster, key, renderId);
    const cpu = process.cpuUsage(cpu0);
    const postgresCpuSec = await postgresCpuSince(pg0);
    // The coordinator's clock: the render created, its task leased and completed.
    const events = await cluster.app.db.query<{ kind: string; at: number }>(
      `SELECT e.kind, EXTRACT(EPOCH FROM e.created_at - r.created_at)::float8 AS at
         FROM renders r JOIN tasks t ON t.subject_id = r.id JOIN task_events e ON e.task_id = t.id
        WHERE r.id = $1 AND e.kind IN ('leased', 'completed') ORDER BY e.id`,
      [renderId],
    );
    const [createdAt] = await cluster.app.db.query<{ at: Date }>(`SELECT created_at AS at FROM renders WHERE id = $1`, [renderId]);
    const t0 = createdAt!.at.getTime();
    // The agent's steps, on its own clock (the same host's), from the render's creation.
    const steps: Array<[string, number]> = agent.logs
      .slice(logFrom)
      .map((l) => {
        try {
          return JSON.parse(l) as { time: string; msg: string; stage?: string };
        } catch {
          return undefined;
        }
      })
      .filter((l): l is { time: string; msg: string; stage?: string } => !!l)
      .map((l) => [l.stage ? `${l.msg}: ${l.stage}` : l.msg, (Date.parse(l.time) - t0) / 1000]);
    const stages: Array<[string, number]> = [...events.map((e): [string, number] => [`coordinator: ${e.kind}`, e.at]), ...steps].sort(
      (a, b) => a[1] - b[1],
    );
    const total = events.find((e) => e.kind === 'completed')?.at ?? NaN;
    return { seconds: total, stages, coordinatorCpu: (cpu.user + cpu.system) / 1e6, postgresCpu: postgresCpuSec };
  };

  const ratios: number[] = [];
  const rows: Array<Record<string, unknown>> = [];
  // One render first, not counted: the agent's first task also loads its code paths and caches.
  await render();
  for (let pair = 1; pair <= pairs; pair++) {
    const order = pair % 2 ? ['bare', 'render'] : ['render', 'bare'];
    let b = NaN;
    let r: Awaited<ReturnType<typeof render>> | undefined;
    for (const side of order) {
      if (side === 'bare') b = await bare();
      else r = await render();
    }
    ratios.push(r!.seconds / b);
    rows.push({
      pair,
      'bare s': r2(b),
      'render s': r2(r!.seconds),
      ratio: Number((r!.seconds / b).toFixed(3)),
      'coordinator cpu s': r2(r!.coordinatorCpu),
      'postgres cpu s': r2(r!.postgresCpu),
    });
    console.error(`pair ${pair}: bare ${r2(b)} s, render ${r2(r!.seconds)} s (${(r!.seconds / b).toFixed(3)}x)`);
    console.error(
      r!.stages
        .map(([what, at], i, all) => `  ${at.toFixed(2).padStart(6)} s (+${(at - (all[i - 1]?.[1] ?? 0)).toFixed(2)}) ${what}`)
        .join('\n'),
    );
  }
  console.table(rows);
  console.log(
    JSON.stringify(
      {
        short: { seconds, size: '1080x1920', captions: 'VIRAL', watermark: '300 px, normal' },
        cores: os.cpus().length,
        loadAverage: os.loadavg().map(r2),
        medianRatio: Number(median(ratios).toFixed(3)),
        rows,
      },
      null,
      2,
    ),
  );
} finally {
  await cluster.close();
}
