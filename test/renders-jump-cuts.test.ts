import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { agentTools, FFMPEG, ffmpegWrapper } from './helpers/media.js';
import { haveMedia, MEDIA, needing } from './helpers/requirements.js';
import { fliteAvailable } from './transcribe-synth.js';
import { QUIET, SPEECH_RATE, makeSpeech, readPcm16, speechVideo, wavFile } from './helpers/speech.js';
import { editedDuration, editedWords, planJumpCuts, type JumpCutPlan } from '@shorts/common/render/jump-cuts';
import { clipSpeech } from '../node-agent/src/media/clip-speech.js';
import { resolveEditing, type EditingOptions } from '@shorts/common/options/editing';
import type { Word } from '@shorts/common/text/transcript';
import { insertFiles } from '../coordinator/src/files/files.js';
import type { Parsed } from './helpers/parsed.js';

// Jump cuts through the API (issue 24): a real coordinator, agent, Postgres and ffmpeg render speech
// made with flite (pauses of 0.3-2 s, spoken "um" and "uh") and a flash-and-beep marker source.
// The agent runs ffmpeg through a wrapper that records its arguments, so a test can read the filter
// graph the agent actually built.

const run = promisify(execFile);
const FPS = 25;
const FRAME = 1 / FPS;
let cluster: TestCluster;
// Fails in CI (which installs flite), skips elsewhere saying so: see needing().
const TOOLS = { flite: fliteAvailable() };

// Pauses of 0.3 to 2 s, two fillers, one of them inside a long pause.
const TALK: Array<string | number> = [
  'so',
  'today',
  1.2,
  'um',
  'we',
  'talk',
  0.4,
  'uh',
  0.3,
  'about',
  2.0,
  'cuts',
  'and',
  0.9,
  'joins',
  0.3,
  'in',
  'one',
  'graph',
  1.5,
  'done',
];
let talk: { source: string; wav: string; words: Word[]; durationSec: number };
let argsDir: string;

test.before(async () => {
  cluster = await startCluster('renders_jump_cuts');
  if (TOOLS.flite) {
    const sp = await makeSpeech(path.join(cluster.dataDir, 'talk'), TALK);
    // A flat picture: the captions and the watermark are the only things drawn on it.
    const source = await speechVideo(sp.wav, path.join(cluster.dataDir, 'talk.mp4'), sp.durationSec, '640x360', { flat: '0x336699' });
    talk = { source, wav: sp.wav, words: sp.words, durationSec: sp.durationSec };
  }
  argsDir = path.join(cluster.dataDir, 'ffmpeg-args');
  await mkdir(argsDir);
  const tools = agentTools();
  const wrapper = await ffmpegWrapper(
    path.join(cluster.dataDir, 'ffmpeg-recording'),
    tools.ffmpegPath,
    `printf '%s\\0' "$@" > "${argsDir}/$(date +%s%N)-$$"`,
  );
  await cluster.startAgent({ FFMPEG_PATH: wrapper, FFPROBE_PATH: tools.ffprobePath });
});
test.after.always(() => cluster?.close());

/**
 * The plan the agent makes for a short with no voice activity stored: on what it hears in the clip
 * (the same function, run here on the same source), so a render's length can be checked to a frame.
 */
async function agentPlan(source: string, range: { start: number; end: number }, words: Word[], editing: EditingOptions) {
  const speech = resolveEditing(editing)?.silence
    ? await clipSpeech(agentTools().ffmpegPath, source, range, await mkdtemp(path.join(cluster.dataDir, 'vad-')))
    : null;
  return planJumpCuts({ ...range, words, speech, editing, fps: FPS });
}

/** The arguments of the agent's ffmpeg run that rendered `renderId`, its task's folder written <task>. */
async function renderArgs(renderId: string): Promise<string[]> {
  const task = await cluster.app.db.one<{ id: string }>(`SELECT id FROM tasks WHERE subject_id = $1 AND type = 'render-short'`, [renderId]);
  const calls = await Promise.all(
    (await readdir(argsDir)).map(async (f) => (await readFile(path.join(argsDir, f), 'utf8')).split('\0').slice(0, -1)),
  );
  const runs = calls.filter((args) => args.includes('-filter_complex') && args.some((a) => a.includes(`${task!.id}-`)));
  if (runs.length !== 1) throw new Error(`${runs.length} ffmpeg runs of render ${renderId}`);
  const folder = new RegExp(`${task!.id}-\\d+`, 'g');
  return runs[0]!.map((a) => a.replace(folder, '<task>'));
}

async function render(key: string, body: Record<string, unknown>): Promise<{ file: string; done: Parsed; renderId: string }> {
  const created = await cluster.api('POST', '/api/render', { key, body });
  if (created.status !== 201) throw new Error(`render refused: ${JSON.stringify(created.body)}`);
  const renderId = created.body.renderId as string;
  const done = await waitFor(
    async () => {
      const r = await cluster.api('GET', `/api/render/${renderId}`, { key });
      return r.body.type === 'done' || r.body.type === 'error' ? r.body : undefined;
    },
    180_000,
    'render',
  );
  if (done.type !== 'done') throw new Error(`render failed: ${JSON.stringify(done)}`);
  const bytes = Buffer.from(await (await fetch(done.url)).arrayBuffer());
  const file = path.join(cluster.dataDir, `${renderId}.mp4`);
  await writeFile(file, bytes);
  return { file, done, renderId };
}

async function streamDurations(file: string): Promise<{ video: number; audio: number }> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_type,duration', '-of', 'json', file]);
  const streams = JSON.parse(stdout).streams as Array<{ codec_type: string; duration: string }>;
  return {
    video: Number(streams.find((s) => s.codec_type === 'video')!.duration),
    audio: Number(streams.find((s) => s.codec_type === 'audio')!.duration),
  };
}

/** Pauses silencedetect finds in the file's sound (over 0.1 s, under -40 dB), away from its ends. */
async function pauses(file: string): Promise<number[]> {
  const { stderr } = await run(FFMPEG, [
    '-hide_banner',
    '-nostats',
    '-i',
    file,
    '-af',
    'silencedetect=noise=-40dB:d=0.1',
    '-f',
    'null',
    '-',
  ]);
  return [...stderr.matchAll(/silence_duration: ([\d.]+)/g)].map((m) => Number(m[1]));
}

/** Loud 5 ms windows of 16 kHz mono sound, as [start, end) runs in seconds. */
function soundRuns(pcm: Int16Array, threshold = QUIET): Array<{ start: number; end: number }> {
  const win = SPEECH_RATE / 200;
  const runs: Array<{ start: number; end: number }> = [];
  for (let i = 0; i + win <= pcm.length; i += win) {
    let peak = 0;
    for (let j = i; j < i + win; j++) peak = Math.max(peak, Math.abs(pcm[j]!));
    if (peak < threshold) continue;
    const t = i / SPEECH_RATE;
    const last = runs[runs.length - 1];
    if (last && t - last.end < 0.05) last.end = t + win / SPEECH_RATE;
    else runs.push({ start: t, end: t + win / SPEECH_RATE });
  }
  return runs;
}

const sha = (file: string) => run('sha256sum', [file]).then((r) => r.stdout.split(' ')[0]);

// The edited render three tests read: silences of 0.25 s or more (every pause put in: 0.3 s by the
// words can be 0.29 s by voice activity) and the fillers removed, one word a caption
// page in MINIMAL (no pop or colour change within a page) at the bottom, a red logo at the top left.
const EDITING: EditingOptions = { removeSilences: { minSilenceSec: 0.25, keepSec: 0.15 }, removeFillers: true };
const LOGO = { x0: 30, y0: 30, x1: 110, y1: 60 };
let edited:
  | Promise<{ file: string; done: Parsed; renderId: string; key: string; short: { startTime: number; endTime: number }; plan: JumpCutPlan }>
  | undefined;
const editedRender = () =>
  (edited ??= (async () => {
    const { org, key } = await cluster.org({ plan: 'pro' });
    // The short starts and ends 0.15 s from the speech, as long as the pauses that should be left.
    const short = { startTime: 0.15, endTime: talk.durationSec - 0.15 };
    const jobId = await insertCompletedJob(cluster.app, {
      organizationId: org.id,
      sourcePath: talk.source,
      words: talk.words,
      shorts: [short],
      width: 640,
      height: 360,
    });
    const logo = path.join(cluster.dataDir, 'logo.png');
    await writeFile(
      logo,
      await sharp({ create: { width: 200, height: 100, channels: 4, background: { r: 255, g: 0, b: 0, alpha: 1 } } })
        .png()
        .toBuffer(),
    );
    const logoKey = `orgs/${org.id}/logo.png`;
    const { size } = await cluster.app.store.put(logoKey, { path: logo });
    const [logoId] = await cluster.app.db.tx((c) =>
      insertFiles(c, [{ organizationId: org.id, name: 'logo.png', type: 'image', sizeBytes: size, objectKey: logoKey }]),
    );
    const rendered = await render(key, {
      id: jobId,
      target: 0,
      preset: 'MINIMAL',
      size: { width: 360, height: 640 },
      options: {
        maxWordsInPage: 1,
        editing: EDITING,
        waterMark: { fileAppId: logoId, left: '20px', top: '20px', width: '100px', opacity: '1', blendMode: 'normal' },
      },
    });
    const plan = await agentPlan(talk.source, { start: short.startTime, end: short.endTime }, talk.words, EDITING);
    return { ...rendered, key, short, plan };
  })());

/** Grey frames of the output, `rows` of it scaled to 90 px wide (each frame a Uint8Array). */
async function greyFrames(file: string, rows: { y: number; h: number }): Promise<Uint8Array[]> {
  const [w, h] = [90, Math.round(rows.h / 4)];
  const { stdout } = await run(
    FFMPEG,
    ['-v', 'error', '-i', file, '-vf', `crop=360:${rows.h}:0:${rows.y},scale=${w}:${h},format=gray`, '-f', 'rawvideo', '-'],
    { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
  );
  const frames: Uint8Array[] = [];
  for (let i = 0; i + w * h <= stdout.length; i += w * h) frames.push(stdout.subarray(i, i + w * h));
  return frames;
}

/**
 * When the burned-in captions change, read off the output's pictures (the source is one flat colour,
 * so anything else in the caption rows is a caption): the times of the frames that show a caption
 * other than the frame before's (after a blank frame, or a different word).
 */
function captionChanges(frames: Uint8Array[]): number[] {
  const differing = (a: Uint8Array, b: Uint8Array | number) =>
    a.reduce((n, v, i) => n + (Math.abs(v - (typeof b === 'number' ? b : b[i]!)) > 24 ? 1 : 0), 0);
  const flat = (f: Uint8Array) => {
    const counts = new Array<number>(256).fill(0);
    for (const v of f) counts[v]!++;
    return counts.indexOf(Math.max(...counts));
  };
  const shown = frames.map((f) => differing(f, flat(f)) >= 3);
  return frames.flatMap((f, i) => (shown[i] && (i === 0 || !shown[i - 1] || differing(f, frames[i - 1]!) >= 3) ? [i * FRAME] : []));
}

/**
 * The best normalised correlation of `clip` with any stretch of `pcm`: about 1 where the very sound
 * is in it. It yields now and then: the coordinator under test shares this process.
 */
async function bestMatch(pcm: Int16Array, clip: Int16Array): Promise<number> {
  // At 8 kHz: a word's shape survives, and it is four times less work.
  const half = (x: Int16Array) => Float64Array.from({ length: Math.floor(x.length / 2) }, (_, i) => x[2 * i]! + x[2 * i + 1]!);
  const [x, c] = [half(pcm), half(clip)];
  const cNorm = Math.sqrt(c.reduce((s, v) => s + v * v, 0));
  let energy = 0;
  for (let i = 0; i < c.length && i < x.length; i++) energy += x[i]! * x[i]!;
  let best = 0;
  for (let lag = 0; lag + c.length <= x.length; lag++) {
    if (lag % 4000 === 0) await new Promise((r) => setImmediate(r));
    if (lag > 0) energy += x[lag + c.length - 1]! ** 2 - x[lag - 1]! ** 2;
    if (energy < 1) continue;
    let dot = 0;
    for (let k = 0; k < c.length; k++) dot += x[lag + k]! * c[k]!;
    best = Math.max(best, dot / (cNorm * Math.sqrt(energy)));
  }
  return best;
}

needing({ tools: TOOLS })(
  'silences and fillers removed: shorter by the removed time, no long pause, words heard when their burned-in captions show, no filler heard or shown, no click',
  async (t) => {
    const { file, done, renderId, key, short, plan } = await editedRender();
    t.true(plan.cuts.length >= 6, `${plan.cuts.length} cuts`);
    // What was put in: 1.2 + 0.4 + 0.3(+uh) + 2.0 + 0.9 + 0.3 + 1.5 s of pause, "um" and "uh" spoken.
    const pauseIn = 1.2 + 0.4 + 0.3 + 2.0 + 0.9 + 0.3 + 1.5;
    t.true(plan.removedSec > pauseIn - 8 * 0.15 - 0.3 && plan.removedSec < pauseIn + 1, `removed ${plan.removedSec}`);

    // The output is shorter by the removed time, within a frame, picture and sound alike.
    const expected = short.endTime - short.startTime - plan.removedSec;
    const { video, audio } = await streamDurations(file);
    t.true(Math.abs(video - expected) <= FRAME + 1e-3, `video ${video} vs ${expected}`);
    t.true(Math.abs(audio - expected) <= FRAME + 1e-3, `audio ${audio} vs ${expected}`);
    t.true(Math.abs(done.length - expected) <= FRAME + 1e-3, `done.length ${done.length}`);
    const files = await cluster.api('GET', '/api/uploads/files', { key });
    const row = (files.body.files ?? files.body).find((f: { name: string; length?: number }) => f.name === `render-${renderId}.mp4`);
    t.true(row && Math.abs(row.length - expected) <= FRAME + 1e-3, `files API length ${row?.length}`);

    // No pause over keepSec + 0.05 s is left in the output's sound.
    const left = await pauses(file);
    t.true(
      left.every((d) => d <= 0.15 + 0.05),
      `pauses ${left.join(', ')}`,
    );
    t.true(Math.max(...(await pauses(talk.source))) > 1.9, 'the source had its 2 s pause');

    // The captions the agent burned in, read off the output's pictures: one a kept word (a filler's
    // page would be one more), each showing when its word is heard.
    const pcm = await readPcm16(file);
    const heard = soundRuns(pcm);
    const kept = talk.words.filter((w) => !['um', 'uh'].includes(w.text));
    const shown = captionChanges(await greyFrames(file, { y: 320, h: 320 }));
    t.is(shown.length, kept.length, `captions shown at ${shown.map((s) => s.toFixed(2)).join(', ')}`);
    for (const [i, at] of shown.entries()) {
      const onset = heard.find((r) => r.end > at - 0.06);
      t.true(onset && Math.abs(onset.start - at) <= 0.06, `"${kept[i]?.text}" captioned at ${at.toFixed(3)}, heard at ${onset?.start}`);
    }
    // Nothing is heard but kept words: every sound starts while its word's caption shows.
    const saying = (at: number, i: number) => ({ start: at - 0.06, end: at + kept[i]!.end - kept[i]!.start + 0.06 });
    for (const r of heard)
      t.true(
        shown.some((at, i) => r.start >= saying(at, i).start && r.start <= saying(at, i).end),
        `sound at ${r.start} belongs to no caption`,
      );
    // Neither filler's sound is anywhere in the output: its own samples match the source at ~1 and a
    // kept word through the render at over 0.9; nothing in the output matches a filler that well.
    const source = await readPcm16(talk.source);
    const speech = await readPcm16(talk.wav);
    const match = async (word: Word) => {
      const clip = speech.subarray(Math.round(word.start * SPEECH_RATE), Math.round(word.end * SPEECH_RATE));
      return { source: await bestMatch(source, clip), output: await bestMatch(pcm, clip) };
    };
    const control = await match(talk.words.find((w) => w.text === 'talk')!);
    t.true(control.output > 0.9, `a kept word matched ${control.output.toFixed(2)} in the output`);
    for (const filler of talk.words.filter((w) => ['um', 'uh'].includes(w.text))) {
      const m = await match(filler);
      t.log(
        `"${filler.text}": best match ${m.source.toFixed(2)} in the source, ${m.output.toFixed(2)} in the output ("talk": ${control.output.toFixed(2)})`,
      );
      t.true(
        m.source > 0.9 && m.output < 0.8,
        `"${filler.text}" matched ${m.source.toFixed(2)} in the source, ${m.output.toFixed(2)} in the output`,
      );
    }

    // No click: the largest sample step at each join is no bigger than elsewhere in the speech.
    const captions = editedWords(plan, talk.words);
    const step = (from: number, to: number) => {
      let max = 0;
      for (let i = Math.max(1, Math.floor(from * SPEECH_RATE)); i < Math.min(pcm.length, to * SPEECH_RATE); i++)
        max = Math.max(max, Math.abs(pcm[i]! - pcm[i - 1]!));
      return max;
    };
    const speechStep = Math.max(...captions.map((w) => step(w.start, w.end)));
    let at = 0;
    for (const k of plan.keep.slice(0, -1)) {
      at += k.end - k.start;
      t.true(step(at - 0.02, at + 0.02) <= speechStep, `step ${step(at - 0.02, at + 0.02)} at the join at ${at} (speech: ${speechStep})`);
    }
    t.true(Math.abs(editedDuration(plan) - expected) < 1e-9);
  },
);

needing({ tools: TOOLS })('the watermark is on every frame of a render with jump cuts, before and after each join', async (t) => {
  const { file, plan } = await editedRender();
  const { stdout } = await run(
    FFMPEG,
    [
      '-v',
      'error',
      '-i',
      file,
      '-vf',
      `crop=${LOGO.x1 - LOGO.x0}:${LOGO.y1 - LOGO.y0}:${LOGO.x0}:${LOGO.y0},format=rgb24`,
      '-f',
      'rawvideo',
      '-',
    ],
    { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
  );
  const size = (LOGO.x1 - LOGO.x0) * (LOGO.y1 - LOGO.y0) * 3;
  const red: boolean[] = [];
  for (let i = 0; i + size <= stdout.length; i += size) {
    let n = 0;
    for (let j = i; j < i + size; j += 3) if (stdout[j]! > 180 && stdout[j + 1]! < 80 && stdout[j + 2]! < 80) n++;
    red.push(n > 0.9 * (size / 3));
  }
  t.true(Math.abs(red.length * FRAME - editedDuration(plan)) <= FRAME + 1e-3, `${red.length} frames`);
  const joins = plan.keep.slice(0, -1).map((_, i) => plan.keep.slice(0, i + 1).reduce((s, k) => s + k.end - k.start, 0));
  t.true(joins.length >= 6);
  for (const at of joins) {
    const f = Math.round(at / FRAME);
    t.true(red[f - 1] && red[f], `the logo on the frames either side of the join at ${at.toFixed(2)} s`);
  }
  const missing = red.flatMap((r, i) => (r ? [] : [i]));
  t.deepEqual(missing, [], `frames without the logo: ${missing.join(', ')}`);
});

needing({ tools: TOOLS })(
  'renders without editing, with editing {} or with both switches off: the same ffmpeg arguments, no jump-cut filter, byte for byte the same file',
  async (t) => {
    const { org, key } = await cluster.org({ plan: 'pro' });
    const jobId = await insertCompletedJob(cluster.app, {
      organizationId: org.id,
      sourcePath: talk.source,
      words: talk.words,
      shorts: [{ startTime: 0.5, endTime: 6 }],
      width: 640,
      height: 360,
    });
    const body = { id: jobId, target: 0, size: { width: 360, height: 640 } };
    const plain = await render(key, body);
    const empty = await render(key, { ...body, options: { editing: {} } });
    const off = await render(key, { ...body, options: { editing: { removeSilences: false, removeFillers: false } } });
    const args = await renderArgs(plain.renderId);
    t.deepEqual(await renderArgs(empty.renderId), args);
    t.deepEqual(await renderArgs(off.renderId), args);
    // The jump-cut filters: the picture's select/setpts on the input, the sound's atrim/acrossfade.
    const jumpCut = (graph: string) => /\[0:v\]select=|jumpcut|atrim|acrossfade/.test(graph);
    t.false(jumpCut(args[args.indexOf('-filter_complex') + 1]!), args[args.indexOf('-filter_complex') + 1]);
    const cut = await renderArgs((await editedRender()).renderId);
    t.true(jumpCut(cut[cut.indexOf('-filter_complex') + 1]!), "the edited render's graph has them");
    t.is(await sha(empty.file), await sha(plain.file));
    t.is(await sha(off.file), await sha(plain.file));
    t.true(Math.abs(plain.done.length - 5.5) <= 0.1, `length ${plain.done.length}`);
  },
);

needing({ tools: TOOLS })(
  'the default brand preset applies editing; bad editing options are refused with a 400 and change nothing',
  async (t) => {
    const { org, key } = await cluster.org({ plan: 'pro' });
    const jobId = await insertCompletedJob(cluster.app, {
      organizationId: org.id,
      sourcePath: talk.source,
      words: talk.words,
      shorts: [{ startTime: 0, endTime: talk.durationSec }],
      width: 640,
      height: 360,
    });
    const before = (await cluster.app.db.one<{ n: number }>('SELECT count(*)::int AS n FROM renders WHERE organization_id = $1', [org.id]))!
      .n;
    for (const editing of [{ removeSilences: 'yes' }, { removeSilences: { keepSec: 5 } }, { removeFillers: { words: ['two words'] } }]) {
      const r = await cluster.api('POST', '/api/render', { key, body: { id: jobId, target: 0, options: { editing } } });
      t.is(r.status, 400, JSON.stringify(r.body));
      t.regex(JSON.stringify(r.body), /options\.editing\./);
    }
    const badPreset = await cluster.api('POST', '/api/organizations/brandings', {
      key,
      body: { name: 'bad', options: { editing: { removeFillers: 3 } } },
    });
    t.is(badPreset.status, 400);
    t.is(
      (await cluster.app.db.one<{ n: number }>('SELECT count(*)::int AS n FROM renders WHERE organization_id = $1', [org.id]))!.n,
      before,
    );

    const preset = await cluster.api('POST', '/api/organizations/brandings', {
      key,
      body: { name: 'tight', isDefault: true, options: { editing: { removeSilences: true } } },
    });
    t.true(preset.status === 200 || preset.status === 201, JSON.stringify(preset.body));
    t.deepEqual(preset.body.options?.editing, { removeSilences: true });
    const { done } = await render(key, { id: jobId, target: 0 });
    const plan = await agentPlan(talk.source, { start: 0, end: talk.durationSec }, talk.words, { removeSilences: true });
    t.true(plan.removedSec > 3);
    t.true(Math.abs(done.length - (talk.durationSec - plan.removedSec)) <= FRAME + 1e-3, `length ${done.length}`);
  },
);

needing({ tools: TOOLS })('voice activity the analysis stored keeps a pause where speech was heard but no word recognised', async (t) => {
  const { org, key } = await cluster.org({ plan: 'pro' });
  // Reframing's detection heard speech through the 2 s pause between "about" and "cuts" (a word the transcriber missed).
  const about = talk.words.find((w) => w.text === 'about')!;
  const cuts = talk.words.find((w) => w.text === 'cuts')!;
  const speech = [...talk.words.map((w) => ({ start: w.start, end: w.end })), { start: about.end + 0.3, end: cuts.start - 0.3 }];
  const detections = {
    version: 1 as const,
    sourceWidth: 640,
    sourceHeight: 360,
    start: 0,
    end: talk.durationSec,
    sampleFps: 5,
    speech,
    tracks: [],
    turns: [],
  };
  const jobId = await insertCompletedJob(cluster.app, {
    organizationId: org.id,
    sourcePath: talk.source,
    words: talk.words,
    shorts: [{ startTime: 0, endTime: talk.durationSec, detections }],
    width: 640,
    height: 360,
  });
  const { done } = await render(key, {
    id: jobId,
    target: 0,
    size: { width: 360, height: 640 },
    options: { editing: { removeSilences: true } },
  });
  const withVoice = planJumpCuts({
    start: 0,
    end: talk.durationSec,
    words: talk.words,
    speech,
    editing: { removeSilences: true },
    fps: FPS,
  });
  const wordsOnly = planJumpCuts({ start: 0, end: talk.durationSec, words: talk.words, editing: { removeSilences: true }, fps: FPS });
  t.true(wordsOnly.removedSec - withVoice.removedSec > 1, 'the heard stretch is kept');
  t.true(
    Math.abs(done.length - (talk.durationSec - withVoice.removedSec)) <= FRAME + 1e-3,
    `length ${done.length}, planned ${talk.durationSec - withVoice.removedSec}`,
  );
});

needing({ tools: TOOLS })(
  'with no voice activity stored, the render hears the clip: words the transcript missed are kept, not cut as a pause',
  async (t) => {
    const { org, key } = await cluster.org({ plan: 'pro' });
    // The transcriber missed "cuts and": by the words alone, about-to-joins is 3.5 s of pause.
    const missed = talk.words.filter((w) => w.text === 'cuts' || w.text === 'and');
    const words = talk.words.filter((w) => !missed.includes(w));
    const jobId = await insertCompletedJob(cluster.app, {
      organizationId: org.id,
      sourcePath: talk.source,
      words,
      shorts: [{ startTime: 0, endTime: talk.durationSec }],
      width: 640,
      height: 360,
    });
    const { file, done, renderId } = await render(key, {
      id: jobId,
      target: 0,
      size: { width: 360, height: 640 },
      options: { editing: { removeSilences: true } },
    });
    const wordsOnly = planJumpCuts({ start: 0, end: talk.durationSec, words, editing: { removeSilences: true }, fps: FPS });
    t.true(
      missed.every((w) => wordsOnly.cuts.some((c) => c.start <= w.start && c.end >= w.end)),
      'by the words alone both would be cut',
    );

    // Both are heard in the output, whole: their own samples match it as well as any kept word's.
    const [pcm, speech] = [await readPcm16(file), await readPcm16(talk.wav)];
    for (const w of [...missed, talk.words.find((x) => x.text === 'joins')!]) {
      const m = await bestMatch(pcm, speech.subarray(Math.round(w.start * SPEECH_RATE), Math.round(w.end * SPEECH_RATE)));
      t.true(m > 0.9, `"${w.text}" matched ${m.toFixed(2)} in the output`);
    }
    const plan = await agentPlan(talk.source, { start: 0, end: talk.durationSec }, words, { removeSilences: true });
    const span = missed[missed.length - 1]!.end - missed[0]!.start;
    t.true(wordsOnly.removedSec - plan.removedSec >= span, `removed ${plan.removedSec} s, ${wordsOnly.removedSec} s by the words alone`);
    t.true(
      Math.abs(done.length - (talk.durationSec - plan.removedSec)) <= FRAME + 1e-3,
      `length ${done.length}, planned ${talk.durationSec - plan.removedSec}`,
    );
    // The render's caption files are re-timed by the cuts it made (on what it heard), not by the words alone.
    const captions = (await cluster.api('GET', `/api/render/${renderId}/captions.json`, { key })).body;
    const ranges = (cuts: Array<{ start: number; end: number }>) => cuts.map((c) => [c.start.toFixed(3), c.end.toFixed(3)]);
    t.deepEqual(ranges(captions.jumpCuts), ranges(plan.cuts));
    t.true(Math.abs(captions.durationSec - done.length) <= FRAME + 1e-3, `captions ${captions.durationSec} s, render ${done.length} s`);
  },
);

test('a flash-and-beep marker source keeps picture and sound in sync within a frame after 10 cuts', async (t) => {
  // 11 markers: a white frame and a 40 ms 1 kHz beep at the same instant, 0.7-1.9 s apart in black silence.
  const times: number[] = [];
  let at = 0.6;
  for (let i = 0; i < 11; i++) {
    times.push(Math.round(at * FPS) / FPS);
    at += 0.7 + (i % 4) * 0.4;
  }
  const duration = times[times.length - 1]! + 0.8;
  const pcm = new Int16Array(Math.round(duration * SPEECH_RATE));
  for (const m of times)
    for (let i = 0; i < 0.04 * SPEECH_RATE; i++)
      pcm[Math.round(m * SPEECH_RATE) + i] = Math.round(12000 * Math.sin((2 * Math.PI * 1000 * i) / SPEECH_RATE));
  const wav = path.join(cluster.dataDir, 'beeps.wav');
  await writeFile(wav, wavFile(pcm, SPEECH_RATE));
  // Grey frames, white on the marker frames, as raw video.
  const frameCount = Math.round(duration * FPS);
  const raw = Buffer.alloc(frameCount * 160 * 90, 16);
  for (const m of times) raw.fill(235, Math.round(m * FPS) * 160 * 90, (Math.round(m * FPS) + 1) * 160 * 90);
  const rawFile = path.join(cluster.dataDir, 'markers.gray');
  await writeFile(rawFile, raw);
  const source = path.join(cluster.dataDir, 'markers.mp4');
  await run(FFMPEG, [
    '-y',
    '-hide_banner',
    '-loglevel',
    'error',
    '-f',
    'rawvideo',
    '-pix_fmt',
    'gray',
    '-s',
    '160x90',
    '-r',
    String(FPS),
    '-i',
    rawFile,
    '-i',
    wav,
    '-vf',
    'scale=640:360,format=yuv420p',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-c:a',
    'aac',
    '-ar',
    '48000',
    '-shortest',
    source,
  ]);
  // Each beep is a word of the transcript.
  const words = times.map((m) => ({ text: 'beep', start: m, end: m + 0.04 }));
  const { org, key } = await cluster.org({ plan: 'pro' });
  const jobId = await insertCompletedJob(cluster.app, {
    organizationId: org.id,
    sourcePath: source,
    words,
    shorts: [{ startTime: 0, endTime: duration }],
    width: 640,
    height: 360,
  });
  const { file } = await render(key, {
    id: jobId,
    target: 0,
    size: { width: 360, height: 640 },
    options: { editing: { removeSilences: true } },
  });
  const plan = await agentPlan(source, { start: 0, end: duration }, words, { removeSilences: true });
  t.true(plan.cuts.length >= 10, `${plan.cuts.length} cuts`);

  // Flash frames of the output: mean luma of each frame.
  const { stdout } = await run(FFMPEG, ['-v', 'error', '-i', file, '-vf', 'scale=8:8,format=gray', '-f', 'rawvideo', '-'], {
    encoding: 'buffer',
    maxBuffer: 64 * 1024 * 1024,
  });
  const frames: number[] = [];
  for (let i = 0; i + 64 <= stdout.length; i += 64) frames.push(stdout.subarray(i, i + 64).reduce((s, v) => s + v, 0) / 64);
  const flashTimes = frames.flatMap((l, i) => (l > 128 && !(frames[i - 1]! > 128) ? [i * FRAME] : []));
  const beeps = soundRuns(await readPcm16(file), 3000).map((r) => r.start);
  t.is(flashTimes.length, 11, `flashes at ${flashTimes.join(', ')}`);
  t.is(beeps.length, 11, `beeps at ${beeps.join(', ')}`);
  for (let i = 0; i < Math.min(flashTimes.length, beeps.length); i++) {
    t.true(Math.abs(flashTimes[i]! - beeps[i]!) <= FRAME + 0.005, `marker ${i}: flash ${flashTimes[i]} beep ${beeps[i]}`);
  }
  t.true(Math.abs(frames.length * FRAME - editedDuration(plan)) <= FRAME + 1e-3);
});

/** Per video frame: how much a box of the picture changes from the frame before (mean absolute
 *  difference of 8-bit luma), and the sound's RMS over the frame's time. */
async function mouthAndVoice(file: string, box: { x: number; y: number; w: number; h: number }) {
  const { stdout } = await run(
    FFMPEG,
    ['-v', 'error', '-i', file, '-vf', `crop=${box.w}:${box.h}:${box.x}:${box.y},scale=48:32,format=gray`, '-f', 'rawvideo', '-'],
    { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
  );
  const size = 48 * 32;
  const motion: number[] = [];
  for (let i = 0; i + size <= stdout.length; i += size) {
    if (i === 0) {
      motion.push(0);
      continue;
    }
    let d = 0;
    for (let j = 0; j < size; j++) d += Math.abs(stdout[i + j]! - stdout[i - size + j]!);
    motion.push(d / size);
  }
  const pcm = await readPcm16(file);
  const per = SPEECH_RATE / FPS;
  const voice = motion.map((_, i) => {
    let sum = 0;
    for (let j = i * per; j < Math.min(pcm.length, (i + 1) * per); j++) sum += pcm[j]! * pcm[j]!;
    return Math.sqrt(sum / per);
  });
  return { motion, voice };
}

/** The shift (frames) of the sound against the mouth's motion that correlates best, and that correlation. */
function bestLag(motion: number[], voice: number[]): { lag: number; r: number } {
  let best = { lag: 0, r: -Infinity };
  for (let lag = -5; lag <= 5; lag++) {
    const xs: number[] = [];
    const ys: number[] = [];
    for (let i = 0; i < motion.length; i++)
      if (voice[i + lag] !== undefined) {
        xs.push(motion[i]!);
        ys.push(voice[i + lag]!);
      }
    const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
    const my = ys.reduce((a, b) => a + b, 0) / ys.length;
    let sxy = 0,
      sxx = 0,
      syy = 0;
    for (let i = 0; i < xs.length; i++) {
      sxy += (xs[i]! - mx) * (ys[i]! - my);
      sxx += (xs[i]! - mx) ** 2;
      syy += (ys[i]! - my) ** 2;
    }
    const r = sxy / Math.sqrt(sxx * syy);
    if (r > best.r) best = { lag, r };
  }
  return best;
}

needing({ media: haveMedia })('lips stay in sync after the cut on a GRID recording with a pause spliced in', async (t) => {
  const clip = path.join(MEDIA, 'grid_swwp2s.mpg');
  // The clip's word alignment (units of 1/25000 s), its silences left out.
  const aligned = (await readFile(path.join(MEDIA, 'grid_swwp2s.align'), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter(([, , w]) => w !== 'sil')
    .map(([a, b, w]) => ({ text: w!, start: Number(a) / 25000, end: Number(b) / 25000 }));
  // 1.5 s of held picture and silence spliced in at 1.08 s (a frame boundary, the end of "white").
  const [splice, pause] = [1.08, 1.5];
  const source = path.join(cluster.dataDir, 'grid-pause.mp4');
  // tpad needs ffmpeg 4.2+: the agent's ffmpeg, not the bundled 2018 build.
  await run(agentTools().ffmpegPath, [
    '-y',
    '-hide_banner',
    '-loglevel',
    'error',
    '-i',
    clip,
    '-filter_complex',
    `[0:v]trim=end=${splice},setpts=PTS-STARTPTS[v1];[0:v]trim=start=${splice},setpts=PTS-STARTPTS,tpad=start_duration=${pause}:start_mode=clone[v2];[v1][v2]concat=n=2:v=1:a=0[v];` +
      `[0:a]atrim=end=${splice},asetpts=PTS-STARTPTS,apad=pad_len=${Math.round(pause * 44100)}[a1];[0:a]atrim=start=${splice},asetpts=PTS-STARTPTS[a2];[a1][a2]concat=n=2:v=0:a=1[a]`,
    '-map',
    '[v]',
    '-map',
    '[a]',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-r',
    String(FPS),
    '-c:a',
    'aac',
    '-ar',
    '48000',
    source,
  ]);
  const words = aligned.map((w) =>
    w.start >= splice - 0.02 ? { ...w, start: w.start + pause, end: w.end + pause } : { ...w, end: Math.min(w.end, splice) },
  );
  const duration = aligned[aligned.length - 1]!.end + pause + 0.3;
  const { org, key } = await cluster.org({ plan: 'pro' });
  const jobId = await insertCompletedJob(cluster.app, {
    organizationId: org.id,
    sourcePath: source,
    words,
    shorts: [{ startTime: 0, endTime: duration }],
    width: 360,
    height: 288,
  });
  // Captions at the top, away from the mouth.
  const { file, done } = await render(key, {
    id: jobId,
    target: 0,
    size: { width: 360, height: 640 },
    options: { editing: { removeSilences: true }, style: [{ property: 'position', value: 'top' }] },
  });
  const plan = await agentPlan(source, { start: 0, end: duration }, words, { removeSilences: true });
  t.true(
    plan.cuts.some((c) => c.start < splice + 0.5 && c.end > splice + 1),
    'the spliced pause is cut',
  );
  t.true(Math.abs(done.length - (duration - plan.removedSec)) <= FRAME + 1e-3, `length ${done.length}`);

  // The mouth: around (175, 212) of the 360x288 source; in the output's centred 9:16 window (x 99, 162 wide) scaled by 640/288.
  const k = 640 / 288;
  const src = bestLag(...(Object.values(await mouthAndVoice(source, { x: 150, y: 195, w: 50, h: 40 })) as [number[], number[]]));
  const out = bestLag(
    ...(Object.values(
      await mouthAndVoice(file, { x: Math.round((150 - 99) * k), y: Math.round(195 * k), w: Math.round(50 * k), h: Math.round(40 * k) }),
    ) as [number[], number[]]),
  );
  t.log(`best lag (frames, r): source ${src.lag} (${src.r.toFixed(2)}), output ${out.lag} (${out.r.toFixed(2)})`);
  t.true(
    src.r > 0.3 && out.r > 0.3,
    `mouth motion follows the voice: r ${src.r.toFixed(2)} in the source, ${out.r.toFixed(2)} in the output`,
  );
  t.true(Math.abs(out.lag - src.lag) <= 1, `sound against lips: ${src.lag} frames in the source, ${out.lag} in the output`);
});
