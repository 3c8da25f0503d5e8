// bench:farm's shorts round (issue 35): the shorts users make, with the coordinator's default
// settings (no RENDER_CHUNK_* set), on 1 agent pinned to core 0 (the second agent drained) and on 2
// agents pinned to cores 0 and 1, in alternating pairs of rounds:
//   - a 45 s two-speaker short whose single framing cuts 4 times between speakers framed at two sizes,
//   - a 60 s short with jump cuts (flite speech with pauses, silences removed),
//   - a 30 s short from a variable-frame-rate clip,
//   - a batch of 6 shorts of one job at once (the studio's "render all").
// Each round's time is the coordinator's: from the first create to the last render's completion.
//   npm run bench:farm -- shorts [pairs=3] [width=1080] [height=1920] [only the cases whose name holds this]
// A farm whose hosts differ: FARM_SLOW_SECOND=1 keeps a busy loop on the second agent's core (that
// host at about half speed), FARM_WARMUP=N first runs N uncounted 2-agent rounds of each case (so
// that both agents' speeds are measured), and RENDER_CHUNK_BY_SPEED=false cuts chunks evenly.
import { execFile, spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startCluster } from '../test/helpers/cluster.js';
import { insertCompletedJob } from '../test/helpers/completed-job.js';
import { FFMPEG } from '../test/helpers/media.js';
import { makeSpeech, speechVideo } from '../test/helpers/speech.js';
import { startPinnedPair } from './pinned-agents.js';
import { renderDone } from './render-done.js';
import type { Reframe, ShortDetections } from '@shorts/common/reframe/types';

const run = promisify(execFile);
const r2 = (n: number) => Math.round(n * 100) / 100;
const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** Speaker A framed wide, B close, taking turns: each turn a piece of its own (4 cuts in 45 s). */
function speakerPath(start: number, end: number): Reframe {
  const turns = [0, 9, 18, 27, 36, 45].map((t) => start + (t * (end - start)) / 45);
  const keyframes: Reframe['keyframes'] = turns
    .slice(0, -1)
    .map((time, i) =>
      i % 2 === 0 ? { time, x: 200, y: 0, width: 606, height: 1080 } : { time, x: 1100, y: 140, width: 454, height: 808 },
    );
  return { sourceWidth: 1920, sourceHeight: 1080, keyframes, segments: [{ start, end, layout: 'single', tracks: [0] }] };
}

/** Detections holding only voice activity: the words' spans, joined across gaps under 0.3 s. */
function heardSpeech(words: Array<{ start: number; end: number }>, end: number): ShortDetections {
  const speech: Array<{ start: number; end: number }> = [];
  for (const w of words) {
    const last = speech.at(-1);
    if (last && w.start - last.end < 0.3) last.end = w.end;
    else speech.push({ start: w.start, end: w.end });
  }
  return { version: 1, sourceWidth: 1920, sourceHeight: 1080, start: 0, end, sampleFps: 5, speech, tracks: [], turns: [] };
}

async function testVideo(out: string, seconds: number, vf?: string): Promise<string> {
  await run(FFMPEG, [
    ...['-y', '-hide_banner', '-loglevel', 'error'],
    ...['-f', 'lavfi', '-i', `testsrc2=s=1920x1080:r=30:d=${seconds}`, '-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`],
    ...(vf ? ['-vf', vf, '-vsync', 'vfr'] : []),
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', out],
  ]);
  return out;
}

/** The four shorts the bench renders (issue 35): speaker cuts, jump cuts, a VFR source, a batch. */
async function benchCases(
  cluster: Awaited<ReturnType<typeof startCluster>>,
  organizationId: string,
): Promise<Array<{ name: string; jobId: string; targets: number[]; options: Record<string, unknown> }>> {
  const dir = cluster.dataDir;
  const words = (start: number, seconds: number) =>
    Array.from({ length: Math.floor(seconds / 0.4) }, (_, i) => ({
      text: `word${i}`,
      start: start + i * 0.4,
      end: start + i * 0.4 + 0.35,
    }));
  const job = async (
    source: string,
    shorts: Array<{ startTime: number; endTime: number; reframe?: Reframe; detections?: ShortDetections }>,
    w = words(0, 200),
  ) => await insertCompletedJob(cluster.app, { organizationId, sourcePath: source, words: w, shorts, width: 1920, height: 1080 });

  const speakers = await testVideo(path.join(dir, 'speakers.mp4'), 46);
  const vfr = await testVideo(path.join(dir, 'vfr.mp4'), 31, "select='not(eq(mod(n,5),2))*not(between(mod(n,97),40,52))'");
  const batch = await testVideo(path.join(dir, 'batch.mp4'), 6 * 30 + 1);
  const talkParts: Array<string | number> = [];
  const lines = ['we cut the pauses', 'and join what is said', 'on every agent at once', 'so the short is done sooner'];
  for (let i = 0; talkParts.length < 150; i++) talkParts.push(...lines[i % lines.length]!.split(' '), [0.6, 1.5, 0.9][i % 3]!);
  const speech = await makeSpeech(path.join(dir, 'talk'), talkParts);
  const talk = await speechVideo(speech.wav, path.join(dir, 'talk.mp4'), speech.durationSec, '1920x1080');
  const talkEnd = Math.min(60, Math.floor(speech.durationSec));

  const cases: Array<{ name: string; jobId: string; targets: number[]; options: Record<string, unknown> }> = [
    {
      name: '45 s, two speakers, 4 cuts',
      jobId: await job(speakers, [{ startTime: 0.5, endTime: 45.5, reframe: speakerPath(0.5, 45.5) }]),
      targets: [0],
      options: {},
    },
    {
      name: `${talkEnd} s with jump cuts`,
      // As an analysed job has it: the voice activity reframing heard, which the render's jump cuts
      // then read (without it every chunk would hear the clip again).
      jobId: await job(talk, [{ startTime: 0, endTime: talkEnd, detections: heardSpeech(speech.words, talkEnd) }], speech.words),
      targets: [0],
      options: { editing: { removeSilences: true } },
    },
    { name: '30 s, variable frame rate', jobId: await job(vfr, [{ startTime: 0.5, endTime: 30.5 }]), targets: [0], options: {} },
    {
      name: '6 shorts of 30 s at once',
      jobId: await job(
        batch,
        Array.from({ length: 6 }, (_, i) => ({ startTime: i * 30, endTime: i * 30 + 30 })),
      ),
      targets: [0, 1, 2, 3, 4, 5],
      options: {},
    },
  ];

  return cases;
}

/**
 * Each lease of a round, in order, for finding idle agents (`FARM_TIMELINE=1`): task type, agent,
 * and seconds from the round's first create to the lease and to its end.
 */
async function timeline(cluster: Awaited<ReturnType<typeof startCluster>>, renderIds: string[]): Promise<string> {
  const { rows } = await cluster.app.db.pool.query<{
    id: string;
    type: string;
    childIndex: number | null;
    agent: string;
    agentName: string;
    leased: number;
    ended: number | null;
  }>(
    `WITH round AS (SELECT min(created_at) AS t0 FROM renders WHERE id = ANY($1::text[]))
     SELECT t.id, t.type, t.child_index AS "childIndex", right(l.agent_id, 4) AS agent,
            (SELECT a.name FROM agents a WHERE a.id = l.agent_id) AS "agentName",
            EXTRACT(EPOCH FROM l.created_at - round.t0)::float8 AS leased,
            EXTRACT(EPOCH FROM (SELECT min(e.created_at) FROM task_events e
                                 WHERE e.task_id = t.id AND e.id > l.id AND e.kind <> 'leased') - round.t0)::float8 AS ended
       FROM round, tasks t JOIN task_events l ON l.task_id = t.id AND l.kind = 'leased'
      WHERE t.subject_id = ANY($1::text[])
      ORDER BY l.created_at`,
    [renderIds],
  );
  // What the agent said of the task: the source it read, its encode.
  const said = (agentName: string, taskId: string) =>
    (cluster.agents.find((a) => a.name === agentName)?.logs ?? [])
      .filter(
        (l) =>
          l.includes(taskId) && /"(source stretch fetched|source read from this host's cache|video encoded|render sound encoded)"/.test(l),
      )
      .map((l) => {
        const j = JSON.parse(l) as { msg: string; bytes?: number; total?: number; seconds?: number; fps?: number };
        return j.msg === 'video encoded'
          ? `encoded in ${j.seconds} s (${j.fps} fps)`
          : j.msg === 'render sound encoded'
            ? `sound in ${j.seconds} s`
            : j.msg === 'source stretch fetched'
              ? `fetched ${Math.round(((j.bytes ?? 0) / (j.total || 1)) * 100)} % of the source`
              : 'source from its cache';
      })
      .join(', ');
  return rows
    .map(
      (r) =>
        `    ${r.type}${r.childIndex === null ? '' : ` ${r.childIndex}`} on ${r.agent}: ${r2(r.leased)}-${r.ended === null ? '?' : r2(r.ended)} s` +
        ` ${said(r.agentName, r.id)}`,
    )
    .join('\n');
}

export async function benchShorts(pairs: number, size: { width: number; height: number }, only?: string): Promise<void> {
  const cluster = await startCluster('bench_farm_shorts', {
    renderActiveLimit: 10_000,
    timers: false,
    renderChunkBySpeed: process.env.RENDER_CHUNK_BY_SPEED !== 'false',
  });
  const hog = process.env.FARM_SLOW_SECOND
    ? spawn('taskset', ['-c', String(1 % os.cpus().length), 'sh', '-c', 'while :; do :; done'], { stdio: 'ignore' })
    : undefined;
  try {
    const { org, key } = await cluster.org({ plan: 'business', credits: 1000 });
    const cases = (await benchCases(cluster, org.id)).filter((c) => !only || c.name.includes(only));
    if (!cases.length) throw new Error(`no case's name holds "${only}"`);

    const env = { AGENT_TASK_TYPES: 'render-short,render-chunk', MAX_CONCURRENT_TASKS: '1', LOG_LEVEL: 'info' };
    const { drainSecond } = await startPinnedPair(cluster, env);

    const round = async (c: (typeof cases)[number]): Promise<{ seconds: number; chunks: number }> => {
      const ids: string[] = [];
      for (const target of c.targets) {
        const r = await cluster.api('POST', '/api/render', {
          key,
          body: { id: c.jobId, target, preset: 'VIRAL', size, options: c.options },
        });
        if (r.status !== 201) throw new Error(`render: ${r.status} ${JSON.stringify(r.body)}`);
        ids.push(r.body.renderId as string);
      }
      for (const id of ids) await renderDone(cluster, key, id);
      const row = await cluster.app.db.one<{ seconds: number; chunks: number }>(
        `SELECT EXTRACT(EPOCH FROM max(e.created_at) - min(r.created_at))::float8 AS seconds,
                (SELECT count(*)::int FROM tasks c WHERE c.subject_id = ANY($1::text[]) AND c.parent_id IS NOT NULL) AS chunks
           FROM renders r JOIN tasks t ON t.subject_id = r.id AND t.parent_id IS NULL JOIN task_events e ON e.task_id = t.id AND e.kind = 'completed'
          WHERE r.id = ANY($1::text[])`,
        [ids],
      );
      if (process.env.FARM_TIMELINE) console.error(await timeline(cluster, ids));
      return row!;
    };

    const results: Array<Record<string, unknown>> = [];
    for (const c of cases) {
      for (let w = 0; w < Number(process.env.FARM_WARMUP ?? 0); w++) {
        await drainSecond(false);
        const warm = await round(c);
        console.error(`${c.name}, warm-up ${w + 1}, 2 agents: ${r2(warm.seconds)} s, ${warm.chunks} chunks (not counted)`);
      }
      const speedUps: number[] = [];
      for (let pair = 1; pair <= pairs; pair++) {
        // Alternating which side goes first, so that a slower minute of a shared machine weighs on both.
        const order = pair % 2 ? [1, 2] : [2, 1];
        const times: Record<number, { seconds: number; chunks: number }> = {};
        for (const agents of order) {
          await drainSecond(agents === 1);
          times[agents] = await round(c);
          console.error(`${c.name}, pair ${pair}, ${agents} agent(s): ${r2(times[agents].seconds)} s, ${times[agents].chunks} chunks`);
        }
        speedUps.push(times[1]!.seconds / times[2]!.seconds);
        results.push({
          short: c.name,
          pair,
          '1 agent s': r2(times[1]!.seconds),
          '1 agent chunks': times[1]!.chunks,
          '2 agents s': r2(times[2]!.seconds),
          '2 agents chunks': times[2]!.chunks,
          'speed-up': r2(times[1]!.seconds / times[2]!.seconds),
        });
      }
      console.error(`${c.name}: median speed-up ${r2(median(speedUps))}x`);
    }
    console.table(results);
    console.log(
      JSON.stringify(
        { cores: os.cpus().length, loadAverage: os.loadavg().map(r2), output: `${size.width}x${size.height}`, results },
        null,
        2,
      ),
    );
  } finally {
    hog?.kill('SIGKILL');
    await cluster.close();
  }
}
