import test, { type ExecutionContext } from 'ava';
import { execFile } from 'node:child_process';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { agentTools, FFMPEG, playerTiming, psnrPerFrame } from './helpers/media.js';
import { prepareRender } from '../node-agent/src/media/render-args.js';
import { runFfmpeg } from '../node-agent/src/media/ffmpeg.js';
import { cacheEntryName } from '../node-agent/src/tasks/object-cache.js';
import { resolveCaptionStyle } from '@shorts/common/render/presets';
import { isBundledFfmpeg } from '@shorts/common/media/tools';
import { requestTaskCancel, showTask } from '../coordinator/src/tasks/operator.js';
import { freeSlots } from '../coordinator/src/tasks/liveness.js';
import type { RenderShortPayload } from '@shorts/common/tasks/render-short';
import { admin, adminJson } from './helpers/admin-cli.js';
import type { Parsed } from './helpers/parsed.js';

// A long render cut into chunks that several real agents render at once, then joined without
// re-encoding the video (issue 22): the same frames, timestamps, sound and sync as the one-pass
// render of the same short, each frame as close to the source as the one-pass render's. Then an
// agent killed while it holds a chunk, and a render cancelled while its chunks run.

const run = promisify(execFile);
let cluster: TestCluster;
let source: string;
let key: string;
let orgId: string;
let jobId: string;
/** The one-pass render, for the chunked ones to equal. */
let single: { file: string; renderId: string };

const FPS = 30;
/** The ffmpeg the agents run (their environment is this process's). */
const agentFfmpeg = agentTools().ffmpegPath;
const SHORT = { startTime: 1, endTime: 13 };
// Words all along the short, two to a caption page: captions change near every join.
const WORDS = Array.from({ length: 34 }, (_, i) => ({ text: `word${i}`, start: 1 + i * 0.35, end: 1 + i * 0.35 + 0.3 }));
const RENDER = { target: 0, preset: 'VIRAL', size: { width: 360, height: 640 }, options: { maxWordsInPage: 2 } };

test.before(async () => {
  // Renders of 4 s and more are chunked, in chunks of at least 4 s: the 12 s short makes 3 on 3 agents.
  cluster = await startCluster('renders_chunked', { renderChunkMinSec: 4, renderChunkSec: 4 });
  source = path.join(cluster.dataDir, 'source.mp4');
  await run(FFMPEG, [
    '-y',
    '-hide_banner',
    '-loglevel',
    'error',
    '-f',
    'lavfi',
    '-i',
    `testsrc2=s=1280x720:r=${FPS}:d=14`,
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:duration=14',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    // A keyframe a second: a chunk's stretch of the source starts at most that far before it.
    '-g',
    String(FPS),
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-shortest',
    source,
  ]);
  const { org, key: apiKey } = await cluster.org({ plan: 'pro' });
  key = apiKey;
  orgId = org.id;
  jobId = await insertCompletedJob(cluster.app, {
    organizationId: org.id,
    sourcePath: source,
    words: WORDS,
    shorts: [SHORT],
    width: 1280,
    height: 720,
  });
  await cluster.startAgent();
});
test.after.always(() => cluster?.close());

async function startRender(): Promise<string> {
  const created = await cluster.api('POST', '/api/render', { key, body: { id: jobId, ...RENDER } });
  if (created.status !== 201) throw new Error(JSON.stringify(created.body));
  return created.body.renderId;
}

/** Waits for the render to end; every progress the API showed on the way goes into `seen`. */
async function settled(renderId: string, seen: number[] = []): Promise<Parsed> {
  return waitFor(
    async () => {
      const r = await cluster.api('GET', `/api/render/${renderId}`, { key });
      if (typeof r.body.progress === 'number') seen.push(r.body.progress);
      return r.body.type === 'done' || r.body.type === 'error' ? r.body : undefined;
    },
    180_000,
    `render ${renderId}`,
  );
}

async function download(url: string, name: string): Promise<string> {
  const file = path.join(cluster.dataDir, name);
  await writeFile(file, Buffer.from(await (await fetch(url)).arrayBuffer()));
  return file;
}

const renderTask = async (renderId: string) => await showTask(cluster.app.db, renderId);

/** Each agent as the coordinator sees it, for a failure to say why work went where it did. */
const farmNow = () =>
  cluster.app.db.query(
    `SELECT a.name, a.state, round(extract(epoch FROM now() - a.last_seen_at)::numeric, 2) AS "silentSec",
            (SELECT array_agg(t.type) FROM tasks t WHERE t.state = 'leased' AND t.leased_by = a.id) AS leased
       FROM agents a ORDER BY a.name`,
  );

/** A counter's value in the coordinator's /metrics. */
async function counter(name: string, type: string): Promise<number> {
  const text = await (await fetch(`${cluster.app.httpUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{type="${type}"}`));
  return Number(line?.split(' ').at(-1));
}

/** The sound as 16-bit samples (the first channel). */
async function samples(file: string): Promise<Int16Array> {
  const { stdout } = await run(
    FFMPEG,
    ['-v', 'error', '-i', file, '-map', '0:a:0', '-ac', '1', '-f', 's16le', '-acodec', 'pcm_s16le', '-'],
    { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
  );
  return new Int16Array(stdout.buffer, stdout.byteOffset, stdout.length / 2);
}

/**
 * The source as the render shows it, without loss: the render's own graph (from the payload its
 * task carried) encoded losslessly. Each render's frames are measured against it.
 */
async function losslessReference(renderId: string): Promise<string> {
  const [row] = await cluster.app.db.query<{ payload: RenderShortPayload }>(`SELECT payload FROM tasks WHERE id = $1`, [
    (await renderTask(renderId)).task.id,
  ]);
  const p = row!.payload;
  const workDir = path.join(cluster.dataDir, 'reference');
  await mkdir(workDir, { recursive: true });
  const out = path.join(cluster.dataDir, 'reference.mkv');
  const args = await prepareRender({
    sourcePath: source,
    startTime: p.startTime,
    endTime: p.endTime,
    words: p.words,
    output: { ...p.output, path: out },
    reframe: p.reframe,
    caption: { style: resolveCaptionStyle(p.captionPreset, p.options.style), maxWordsInPage: p.options.maxWordsInPage ?? 4 },
    encoder: 'libx264',
    legacyFfmpeg: isBundledFfmpeg(agentFfmpeg),
    workDir,
    sourceWidth: 1280,
    sourceHeight: 720,
  });
  args.splice(args.indexOf('-crf'), 2, '-qp', '0');
  args.splice(args.indexOf('-movflags'), 2);
  args[args.indexOf('mp4')] = 'matroska';
  await runFfmpeg(agentFfmpeg, args, { durationSec: p.endTime - p.startTime });
  return out;
}

/** The joined render equals the one-pass render in everything a viewer or an editor can measure. */
async function assertEqualsSinglePass(t: ExecutionContext, file: string, name: string): Promise<void> {
  const [a, b] = await Promise.all([playerTiming(single.file), playerTiming(file)]);
  t.is(b.framePts.length, a.framePts.length, 'the same number of frames');
  t.deepEqual(b.framePts, a.framePts, 'every frame at the same timestamp');
  t.is(b.duration, a.duration, 'the same duration');
  t.is(b.video.duration, a.video.duration);
  t.is(b.audio.duration, a.audio.duration);
  t.is(
    Number(b.audio.start_time) - Number(b.video.start_time),
    Number(a.audio.start_time) - Number(a.video.start_time),
    'A/V offset unchanged',
  );

  const reference = await losslessReference(single.renderId);
  const [psnrSingle, psnrChunked] = await Promise.all([
    psnrPerFrame(single.file, reference, path.join(cluster.dataDir, 'single.psnr')),
    psnrPerFrame(file, reference, path.join(cluster.dataDir, `${name}.psnr`)),
  ]);
  t.is(psnrChunked.length, a.framePts.length);
  const worst = psnrChunked.map((p, i) => ({ frame: i, diff: Math.abs(p - psnrSingle[i]!) })).sort((x, y) => y.diff - x.diff)[0]!;
  t.true(
    worst.diff <= 0.5,
    `frame ${worst.frame}: PSNR ${psnrChunked[worst.frame]} dB against the one-pass render's ${psnrSingle[worst.frame]} dB`,
  );

  const [soundSingle, soundChunked] = await Promise.all([samples(single.file), samples(file)]);
  t.deepEqual(Buffer.from(soundChunked.buffer), Buffer.from(soundSingle.buffer), 'the same sound, sample for sample');
  // No click at a join: the largest step between two samples near a join is no larger than elsewhere.
  const rate = soundChunked.length / Number(b.audio.duration);
  const joins = [4, 8].map((sec) => Math.round(sec * rate));
  const near = (i: number) => joins.some((j) => Math.abs(i - j) < rate * 0.02);
  let atJoins = 0;
  let elsewhere = 0;
  for (let i = 1; i < soundChunked.length; i++) {
    const step = Math.abs(soundChunked[i]! - soundChunked[i - 1]!);
    if (near(i)) atJoins = Math.max(atJoins, step);
    else elsewhere = Math.max(elsewhere, step);
  }
  t.true(elsewhere > 0, 'the sound is not silent');
  t.true(atJoins <= elsewhere, `largest step at a join ${atJoins}, elsewhere ${elsewhere}`);
}

test.serial('with one free render slot a long render is done in one pass', async (t) => {
  const renderId = await startRender();
  const done = await settled(renderId);
  t.is(done.type, 'done', JSON.stringify(done));
  t.deepEqual((await renderTask(renderId)).children, [], 'no chunks');
  single = { file: await download(done.url, 'single.mp4'), renderId };
  t.is((await playerTiming(single.file)).framePts.length, (SHORT.endTime - SHORT.startTime) * FPS);
});

test.serial(
  'with three free slots it is rendered in three chunks by several agents and joined: the same frames, timestamps, sound and sync as one pass',
  async (t) => {
    await Promise.all([cluster.startAgent(), cluster.startAgent()]);
    const renderId = await startRender();
    const seen: number[] = [];
    const done = await settled(renderId, seen);
    t.is(done.type, 'done', JSON.stringify(done));
    const family = await renderTask(renderId);
    t.is(family.task.state, 'completed');
    t.deepEqual(
      family.children.map((c) => [c.type, c.childIndex, c.state]),
      [0, 1, 2].map((i) => ['render-chunk', i, 'completed']),
    );
    const events = await cluster.app.db.query<{ kind: string }>(`SELECT kind FROM task_events WHERE task_id = $1 ORDER BY id`, [
      family.task.id,
    ]);
    t.deepEqual(
      events.map((e) => e.kind).filter((k) => ['fanned_out', 'joining', 'completed'].includes(k)),
      ['fanned_out', 'joining', 'completed'],
    );
    t.true(
      seen.every((p, i) => i === 0 || p >= seen[i - 1]!),
      `progress only forward: ${seen.join(' ')}`,
    );
    t.is(await counter('shorts_task_fan_outs_total', 'render-short'), 1, '/metrics counts the split');
    t.is(await counter('shorts_task_children_total', 'render-chunk'), 3, '/metrics counts its children');
    // The admin CLI lists the render's task and its children.
    const shown = await adminJson<{ children: Array<{ childIndex: number; type: string; state: string }> }>(cluster, [
      'task',
      'show',
      renderId,
      '--json',
    ]);
    t.deepEqual(
      shown.children.map((c) => [c.childIndex, c.type, c.state]),
      [
        [0, 'render-chunk', 'completed'],
        [1, 'render-chunk', 'completed'],
        [2, 'render-chunk', 'completed'],
      ],
    );
    const table = await admin(cluster, ['task', 'show', family.task.id]);
    t.regex(table, new RegExp(`${family.children[2]!.id}\\s+render-chunk\\s+3\\s+completed\\s+1\\s+100%`));
    // The agent that joined took from its own disk what it had rendered itself (its chunks, the
    // sound with the first one) and downloaded only the rest.
    const byAgent = await cluster.app.db.query<{ taskId: string; agent: string }>(
      `SELECT e.task_id AS "taskId", a.name AS agent FROM task_events e JOIN agents a ON a.id = e.agent_id
        WHERE e.kind = 'completed' AND e.task_id = ANY($1::text[]) ORDER BY e.id`,
      [[family.task.id, ...family.children.map((c) => c.id)]],
    );
    const joiner = byAgent.find((e) => e.taskId === family.task.id)!.agent;
    const ownChunks = family.children.filter((c) => byAgent.some((e) => e.taskId === c.id && e.agent === joiner));
    const ownObjects = ownChunks.length + (ownChunks.some((c) => c.childIndex === 0) ? 1 : 0);
    const joinLog = JSON.parse(cluster.agents.find((a) => a.name === joiner)!.logs.find((l) => /chunks to join fetched/.test(l))!);
    t.log(`the join on ${joiner}, which rendered chunks ${ownChunks.map((c) => (c.childIndex ?? 0) + 1).join(', ')}`);
    const joined = family.children.length + 1; // the chunks and the sound
    t.deepEqual([joinLog.fromDisk, joinLog.downloaded], [ownObjects, joined - ownObjects], `the join on ${joiner}`);
    // Read once by the join, the pieces take no room after it: gone from the joiner's disk, and
    // first in line for eviction on the other agents that rendered them.
    const pieces = await cluster.app.db.query<{ agent: string; chunkKey: string; soundKey: string | null }>(
      `SELECT a.name AS agent, t.result->>'objectKey' AS "chunkKey", t.result->'audio'->>'objectKey' AS "soundKey"
         FROM tasks t JOIN task_events e ON e.task_id = t.id AND e.kind = 'completed' JOIN agents a ON a.id = e.agent_id
        WHERE t.parent_id = $1`,
      [family.task.id],
    );
    const cached = async (agent: string, key: string) =>
      await stat(path.join(cluster.dataDir, agent, 'object-cache', cacheEntryName(key))).catch(() => undefined);
    for (const piece of pieces)
      for (const key of [piece.chunkKey, piece.soundKey].filter((k): k is string => !!k)) {
        t.is(await cached(joiner, key), undefined, `${key} left on ${joiner}, which joined`);
        if (piece.agent !== joiner) t.is((await cached(piece.agent, key))?.mtimeMs, 0, `${key} on ${piece.agent}: first to go`);
      }
    // Each chunk read its own stretch of the source (issue 35): from this host's cache where it holds
    // the source (the agent of the one-pass render), else by byte ranges, a part of the file.
    const size = (await stat(source)).size;
    const reads = cluster.agents.flatMap((a) =>
      a.logs.filter((l) => l.includes(renderId) && /"source (stretch fetched|read from this host's cache)"/.test(l)),
    );
    t.is(reads.length, 3, 'one read of the source a chunk');
    const stretches = reads.filter((l) => l.includes('source stretch fetched')).map((l) => JSON.parse(l) as Parsed);
    t.true(stretches.length >= 1, 'a chunk on an agent without the source fetched its stretch');
    // The chunk that encodes the render's sound reads all of the source: it is held for an agent that
    // holds it, and no agent fetches nearly the whole file before it can start.
    const soundChunk = family.children.find((c) => c.childIndex === 0)!;
    const soundRead = reads.find((l) => l.includes(soundChunk.id));
    t.regex(soundRead ?? '', /source read from this host's cache/, `the sound's chunk: ${soundRead}`);
    for (const s of stretches) {
      t.false(s.whole, 'laid out by byte ranges');
      t.is(s.total, size);
      t.true(s.bytes <= size, `${s.bytes} of ${size} bytes`);
      // The first chunk also encodes the sound of the whole short (1-13 s of this 14 s source): its
      // sound comes with the video between its packets. The others read their own 4.5 s, with the
      // keyframe before, the margins and the head (test/source-stretch.test.ts measures a 4 s
      // stretch of a longer source: a fifth of it).
      if (s.other.to - s.other.from === s.video.to - s.video.from)
        t.true(s.bytes < size * 0.9, `a chunk of ${s.video.from}-${s.video.to} s fetched ${s.bytes} of ${size} bytes`);
    }
    t.log(stretches.map((s) => `${s.video.from}-${s.video.to} s: ${s.bytes} of ${size} bytes`).join('; '));
    await assertEqualsSinglePass(t, await download(done.url, 'chunked.mp4'), 'chunked');
    // The chunks and the sound were the join's inputs only.
    const leftovers = [];
    for (const child of family.children)
      for await (const o of cluster.app.store.list(`orgs/${orgId}/tasks/${child.id}/`)) leftovers.push(o.key);
    t.deepEqual(leftovers, []);
  },
);

test.serial('an agent killed while it holds a chunk: the chunk is leased again and the render is still exact, stored once', async (t) => {
  const renderId = await startRender();
  const parentId = (
    await waitFor(
      async () =>
        (await cluster.app.db.query<{ id: string }>(`SELECT id FROM tasks WHERE subject_id = $1 AND parent_id IS NULL`, [renderId]))[0],
      10_000,
      'render task',
    )
  ).id;
  const held = await waitFor(
    async () =>
      (
        await cluster.app.db.query<{ id: string; name: string }>(
          `SELECT t.id, a.name FROM tasks t JOIN agents a ON a.id = t.leased_by WHERE t.parent_id = $1 AND t.state = 'leased' AND t.stage = 'rendering' LIMIT 1`,
          [parentId],
        )
      )[0],
    120_000,
    'a chunk rendering',
  );
  await cluster.agents.find((a) => a.name === held.name)!.kill('SIGKILL');
  await cluster.startAgent();
  await waitFor(async () => (await cluster.app.queue.tick()) > 0 || undefined, 30_000, 'the lost lease taken back');
  const done = await settled(renderId);
  t.is(done.type, 'done', JSON.stringify(done));
  const [chunk] = await cluster.app.db.query<{ attempts: number; state: string }>(`SELECT attempts, state FROM tasks WHERE id = $1`, [
    held.id,
  ]);
  t.deepEqual(chunk, { attempts: 2, state: 'completed' });
  await assertEqualsSinglePass(t, await download(done.url, 'rescued.mp4'), 'rescued');
  const files = await cluster.app.db.query<{ size: string }>(
    `SELECT size_bytes AS size FROM files WHERE organization_id = $1 AND name = $2`,
    [orgId, `render-${renderId}.mp4`],
  );
  t.deepEqual(
    files.map((f) => Number(f.size)),
    [done.size],
    'one file row',
  );
  const [usage] = await cluster.app.db.query<{ used: string; files: string }>(
    `SELECT o.storage_used_bytes AS used, (SELECT sum(size_bytes) FROM files f WHERE f.organization_id = o.id) AS files FROM organizations o WHERE o.id = $1`,
    [orgId],
  );
  t.is(Number(usage!.used), Number(usage!.files), 'storage charged once per stored file');
  const completions = await cluster.app.db.query(`SELECT 1 FROM task_events WHERE task_id = $1 AND kind = 'completed'`, [parentId]);
  t.is(completions.length, 1);
});

test.serial('a render cancelled while its chunks run: no task is left running or queued', async (t) => {
  // The farm this test is about: the three live agents heard from and idle, so the render splits
  // (a silent agent's slot is not counted free, and the render would rightly go in one pass).
  await waitFor(async () => (await freeSlots(cluster.app, 'render-chunk', '')).all >= 3, 60_000, 'three idle agents').catch(
    async (e: Error) => {
      throw new Error(`${e.message}: ${JSON.stringify(await farmNow())}`);
    },
  );
  const renderId = await startRender();
  await waitFor(
    async () =>
      (await cluster.app.db.query(`SELECT 1 FROM tasks WHERE subject_id = $1 AND parent_id IS NOT NULL AND state = 'leased'`, [renderId]))
        .length > 0,
    120_000,
    'chunks running',
  ).catch(async (e: Error) => {
    throw new Error(`${e.message}: ${JSON.stringify({ render: await renderTask(renderId), farm: await farmNow() })}`);
  });
  await requestTaskCancel(cluster.app.db, renderId);
  const live = () =>
    cluster.app.db.query<{ id: string; state: string }>(
      `SELECT id, state FROM tasks WHERE subject_id = $1 AND state IN ('queued', 'leased', 'waiting')`,
      [renderId],
    );
  await waitFor(
    async () => {
      await cluster.app.queue.tick();
      return (await live()).length === 0;
    },
    60_000,
    'every task of the render ended',
  );
  const done = await settled(renderId);
  t.is(done.type, 'error');
  t.is(done.code, 'CANCELLED');
  const family = await renderTask(renderId);
  t.is(family.task.state, 'cancelled');
  t.true(
    family.children.length >= 2 && family.children.every((c) => c.state === 'cancelled' || c.state === 'completed'),
    JSON.stringify(family.children),
  );
  // Nothing comes back to life: a moment later every agent is idle and nothing of the render is queued.
  await new Promise((r) => setTimeout(r, 1500));
  t.deepEqual(await live(), []);
  t.is((await cluster.app.db.query(`SELECT 1 FROM tasks WHERE state = 'leased'`)).length, 0);
});
