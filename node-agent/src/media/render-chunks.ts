// A long render in chunks (issue 22): the cut points, the audio encoded once (by the first chunk,
// beside its video), and the join.
//
// Each chunk runs the whole render's filter graph on its own stretch of the source (render-args.ts,
// `chunk`): same caption script, same crop path, same encoder settings, a keyframe every GOP. The
// cuts fall between two source frames, GOP-aligned, so every frame of the single-pass render is in
// exactly one chunk and each chunk starts where the single pass has a keyframe. The chunk's frames
// are put back on the single pass's clock (to the tick) before the graph, so captions appear on the
// same frames; then the video streams are joined as they are (concat demuxer, -c copy) with the
// audio of the whole range, encoded once: no seam in sound, no frame repeated or lost.
import { measureLoudness, SOUND_OUTPUT_ARGS, soundFilter } from './sound.js';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { inputGuard } from '@shorts/common/media/input-guard';
import { toolEnv } from '@shorts/common/media/tools';
import { editedDuration, type JumpCutPlan } from '@shorts/common/render/jump-cuts';
import { runFfmpeg } from './ffmpeg.js';
import { buildAudioCut } from './jump-cut-graph.js';
import { ffmpegPreamble, fileUrl, mp4Output, sourceInput } from './ffmpeg-args.js';
import { sec } from './reframe-graph.js';

const run = promisify(execFile);

/** Keyframe interval of every render, chunked or not (seconds of source frames). */
export const KEYFRAME_INTERVAL_SEC = 2;

export const gopFramesFor = (fps: number | null | undefined): number | undefined =>
  fps && fps > 0 ? Math.max(1, Math.round(KEYFRAME_INTERVAL_SEC * fps)) : undefined;

/** One chunk's stretch of the source, in microseconds on ffmpeg's `-ss` clock, and the shift (in
 *  the video stream's ticks) that puts its frames back on the single pass's clock. */
export interface ChunkCut {
  fromUs: number;
  toUs: number;
  shiftTicks: number;
  /** The single pass's clock at the chunk's first shown frame, microseconds from the render's first
   *  (on the edited clock with jump cuts): where a crop path of several pieces puts it back after
   *  their concat, which restarts it (reframe-graph.ts). Absent or 0: the first chunk. */
  clockUs?: number;
  /** A variable-frame-rate source put on a constant rate (render-args.ts `constantRate`): the output
   *  frames, counted on that rate's clock from the clip's start, the chunk renders ([from, to); to
   *  absent: to the render's end). */
  slots?: { from: number; to?: number };
  /** The frames the chunk keeps (all but the last chunk): it renders OVERRUN_FRAMES more. */
  keepFrames?: number;
}

/** Seconds as ffmpeg's -ss/-to read them, exact to the microsecond. */
export const usToSec = (us: number) => (us / 1e6).toFixed(6);
/** The microseconds ffmpeg reads from `sec()` (reframe-graph.ts), which rounds to the millisecond. */
export const secToUs = (s: number) => Math.round(s * 1000) * 1000;

export interface SourceFrames {
  timeBase: { num: number; den: number };
  /** Each video frame's timestamp in the stream's ticks, ascending. */
  pts: number[];
  /** The container's start (what -ss counts from), seconds. */
  containerStart: number;
}

/** The video frames' timestamps over [start, end] from the packets (no decoding). */
export async function probeFrameTimes(
  ffprobePath: string,
  file: string,
  start: number,
  end: number,
  signal?: AbortSignal,
): Promise<SourceFrames> {
  const { stdout } = await run(
    ffprobePath,
    [
      '-v',
      'error',
      ...inputGuard(),
      '-select_streams',
      'v:0',
      '-read_intervals',
      `${Math.max(0, start - 5).toFixed(3)}%${(end + 1).toFixed(3)}`,
      '-show_entries',
      'packet=pts:stream=time_base:format=start_time',
      '-of',
      'json',
      file,
    ],
    { signal, maxBuffer: 64 * 1024 * 1024, env: toolEnv() },
  );
  const json = JSON.parse(stdout) as {
    packets?: Array<{ pts?: number }>;
    streams?: Array<{ time_base?: string }>;
    format?: { start_time?: string };
  };
  const [num, den] = (json.streams?.[0]?.time_base ?? '').split('/').map(Number);
  if (!(num! > 0 && den! > 0)) throw new Error('the video stream has no time base');
  const pts = (json.packets ?? [])
    .map((p) => p.pts)
    .filter((p): p is number => Number.isFinite(p))
    .sort((a, b) => a - b);
  return { timeBase: { num: num!, den: den! }, pts, containerStart: Number(json.format?.start_time ?? 0) || 0 };
}

const gcd = (a: number, b: number): number => (b ? gcd(b, a % b) : a);
/** av_rescale's rounding: to the nearest, halves away from zero. */
const roundHalfAway = (x: number) => Math.sign(x) * Math.round(Math.abs(x));

/** The render [start, end) on the source's frames, as both cut planners start: the tick/microsecond
 *  conversions, the render's start in ticks (-ss counts from the container's start), and the frames
 *  the single pass keeps (from the first at or after -ss, those under the render's length from it).
 *  Null when no frame is at or after the start. */
function renderFrames(frames: SourceFrames, o: { start: number; end: number }) {
  const { num, den } = frames.timeBase;
  const usToTicks = (us: number) => (us * den) / (1e6 * num);
  const ticksToUs = (ticks: number) => (ticks * 1e6 * num) / den;
  const startUs = secToUs(o.start);
  const endUs = secToUs(o.end);
  const offsetTicks = usToTicks(startUs + Math.round(frames.containerStart * 1e6));
  const firstIndex = frames.pts.findIndex((p) => p >= offsetTicks - 1e-6);
  if (firstIndex < 0) return null;
  const lengthTicks = roundHalfAway(usToTicks(endUs - startUs));
  const inRender = frames.pts.slice(firstIndex).filter((p) => p - frames.pts[firstIndex]! < lengthTicks);
  // A shift of stepUs is a whole number of ticks.
  const stepUs = (1e6 * num) / gcd(1e6 * num, den);
  return { num, den, usToTicks, ticksToUs, startUs, offsetTicks, inRender, stepUs };
}

/** The cut just before the render's frame `frame` (an index into inRender): a microsecond, a whole
 *  number of ticks from the start, as near as it can to the middle of that frame and the one before,
 *  and clear of both; undefined when the frames are too close for one. */
function cutBefore(r: NonNullable<ReturnType<typeof renderFrames>>, frame: number): number | undefined {
  const { ticksToUs, inRender, offsetTicks, startUs, stepUs } = r;
  const lo = ticksToUs(inRender[frame - 1]! - offsetTicks) + startUs;
  const hi = ticksToUs(inRender[frame]! - offsetTicks) + startUs;
  const margin = Math.min(500, (hi - lo) / 4);
  const mid = (lo + hi) / 2;
  return [Math.round((mid - startUs) / stepUs), Math.floor((mid - startUs) / stepUs), Math.ceil((mid - startUs) / stepUs)]
    .map((n) => startUs + n * stepUs)
    .find((us) => us > lo + margin && us < hi - margin);
}

/** What every chunk plan is asked: the render's stretch (seconds), how many chunks, the GOP they are
 *  cut on, the first chunk's other work (its share of the video's) and each chunk's agent's speed. */
interface ChunkPlan {
  start: number;
  end: number;
  chunks: number;
  gopFrames: number;
  firstChunkExtraShare?: number;
  /** Each chunk's agent's measured speed, relative (the coordinator's; absent: all alike). */
  speeds?: readonly number[];
}

/**
 * Where `chunks` chunks of the render [start, end) are cut, or null when they cannot be cut
 * exactly (too few GOPs, or a variable frame rate). Cut k sits between the shown frames k*per-1 and
 * k*per of the render (per a multiple of the GOP), on a microsecond the stream's time base also
 * counts whole (so the shift back to the single pass's clock is an exact number of ticks), as near
 * as it can to the middle of the two source frames around it.
 *
 * With jump cuts (`keep`: the kept ranges on the clip's clock, as the graph selects them) only the
 * kept frames are shown and counted: a cut between two shown frames on either side of a jump cut
 * lies anywhere in the removed stretch, whose frames no chunk shows.
 *
 * ffmpeg keeps, after an input -ss, the frames from the first at or after it, and with -to those
 * whose distance from that first kept frame is under (to - ss) in ticks. So each chunk's -to is set
 * half a frame past its own last frame, counted from its own first: the single pass's last frame is
 * found by the same rule, from its -ss/-to.
 */
export function planChunkCuts(
  frames: SourceFrames,
  o: ChunkPlan & {
    keep?: Array<{ start: number; end: number }>;
    fps?: number | null;
    /** The constant rate a variable-rate source is put on (render-args.ts): cuts between its frames. */
    constantRate?: number;
  },
): ChunkCut[] | null {
  if (o.constantRate) return o.keep ? null : planConstantRateCuts(frames, { ...o, constantRate: o.constantRate });
  const r = renderFrames(frames, o);
  if (!r) return null;
  const { usToTicks, ticksToUs, startUs, offsetTicks, inRender } = r;
  // A variable frame rate: the encoder's constant-rate output repeats or drops frames by where each
  // falls from the render's start, which a chunk (restarted at 0) would decide differently.
  let [minGap, maxGap] = [Infinity, 0];
  for (let i = 1; i < inRender.length; i++) {
    const gap = inRender[i]! - inRender[i - 1]!;
    [minGap, maxGap] = [Math.min(minGap, gap), Math.max(maxGap, gap)];
  }
  if (maxGap - minGap > 1) return null;
  // Each frame's time on the clip's clock, and (jump cuts) on the edited clock: the graph's own
  // select and setpts (jump-cut-graph.ts), with its millisecond rounding.
  const clipSec = (i: number) => ticksToUs(inRender[i]! - offsetTicks) / 1e6;
  const ms = (n: number) => Math.round(n * 1000) / 1000;
  const half = 0.5 / (o.fps && o.fps > 0 ? o.fps : 30);
  const gaps: Array<{ at: number; sec: number }> = [];
  let prevEnd = 0;
  for (const k of o.keep ?? []) {
    if (k.start - prevEnd > 1e-9) gaps.push({ at: ms(prevEnd + (k.start - prevEnd) / 2), sec: ms(k.start - prevEnd) });
    prevEnd = k.end;
  }
  const shown: number[] = [];
  for (let i = 0; i < inRender.length; i++) {
    const t = clipSec(i);
    if (!o.keep || o.keep.some((k) => t >= ms(k.start - half) && t < ms(k.end - half))) shown.push(i);
  }
  const editedUs = (i: number) => {
    const t = clipSec(i);
    return Math.round((t - gaps.reduce((sum, g) => (t >= g.at ? sum + g.sec : sum), 0)) * 1e6);
  };
  const gops = Math.floor(shown.length / o.gopFrames);
  if (o.chunks < 2 || gops < o.chunks) return null;
  const firsts = [0];
  const fromsUs = [startUs];
  const clocksUs = [0];
  const startGops = chunkStartGops(shown.length / o.gopFrames, o);
  for (let k = 1; k < o.chunks; k++) {
    const gopIndex = startGops[k]!;
    const first = shown[gopIndex * o.gopFrames]!;
    const cut = cutBefore(r, first);
    if (cut === undefined) return null;
    firsts.push(first);
    fromsUs.push(cut);
    clocksUs.push(editedUs(first) - editedUs(shown[0]!));
  }
  const shownIndex = firsts.map((f) => shown.indexOf(f));
  // A start between two frames: the encoder's constant-rate output fills the slots before the first
  // frame's own with copies of it (a frame 17.6 ms in at 29.97 fps rounds to slot 1, so slot 0 is a
  // copy), in the single pass and in the first chunk alike. The first chunk keeps those too.
  const frameTicks = inRender.length > 1 ? inRender[1]! - inRender[0]! : 0;
  const leadCopies = frameTicks > 0 ? Math.max(0, Math.round((inRender[0]! - offsetTicks) / frameTicks)) : 0;
  return firsts.map((first, k) => {
    const next = shownIndex[k + 1];
    // Every chunk but the last runs on into the next one's frames (OVERRUN_FRAMES), which it drops.
    const last = next === undefined ? inRender.length - 1 : shown[Math.min(shown.length, next + OVERRUN_FRAMES) - 1]!;
    const gapTicks = last > 0 ? inRender[last]! - inRender[last - 1]! : usToTicks(1e6 / 30);
    const toUs = fromsUs[k]! + Math.round(ticksToUs(inRender[last]! - inRender[first]! + gapTicks / 2));
    return {
      fromUs: fromsUs[k]!,
      toUs,
      shiftTicks: Math.round(usToTicks(fromsUs[k]! - startUs)),
      clockUs: clocksUs[k]!,
      ...(next === undefined ? {} : { keepFrames: next - shownIndex[k]! + (k === 0 ? leadCopies : 0) }),
    };
  });
}

/**
 * The GOP each chunk starts at (0 for the first), so that all chunks end together: each gets video
 * in proportion to its agent's speed (`speeds`, relative; all alike when absent), and the first that
 * much less for its other work (`firstChunkExtraShare`, the render's sound: a share of the whole
 * video's work, done at the first chunk's speed). `lengthGops` is the video's length in GOPs, the
 * last partial one counted (the last chunk's work too: a 45 s render at 2 s GOPs is 22.5 of them);
 * every chunk keeps at least one of its whole GOPs.
 */
export function chunkStartGops(lengthGops: number, o: Pick<ChunkPlan, 'chunks' | 'firstChunkExtraShare' | 'speeds'>): number[] {
  const gops = Math.floor(lengthGops);
  const speed = (k: number) => {
    const v = o.speeds?.[k];
    return v !== undefined && Number.isFinite(v) && v > 0 ? v : 1;
  };
  const extra = Math.max(0, o.firstChunkExtraShare ?? 0) * lengthGops;
  let speedSum = 0;
  for (let k = 0; k < o.chunks; k++) speedSum += speed(k);
  // Chunk k takes speed(k) * T of time-weighted work; the first chunk's includes the extra.
  const perSpeed = (lengthGops + extra) / speedSum;
  const starts = [0];
  let reach = -extra;
  for (let k = 1; k < o.chunks; k++) {
    reach += speed(k - 1) * perSpeed;
    starts.push(Math.min(gops - (o.chunks - k), Math.max(starts[k - 1]! + 1, Math.round(reach))));
  }
  return starts;
}

/**
 * Frames a chunk renders past its own end and then drops (all but the last chunk). The encoder
 * decides a frame's type and quality from the frames it has yet to encode (x264 veryfast: 10 of
 * lookahead, 3 B-frames): at the end of a stream it has none, and its last frames came out up to
 * 1.1 dB from the single pass's (a panning crop, 360x640). Given the frames that follow, as in one
 * pass, it encodes its own the same; after the next keyframe nothing of them is kept.
 */
export const OVERRUN_FRAMES = 15;

/**
 * The cuts of a variable-frame-rate render, whose graph first puts the source on a constant rate
 * (`fps`): output frame n shows the last source frame whose time, rounded to that rate, is at most
 * n. Chunk k shows the output frames [s_k, s_k+1) (s_k a whole number of GOPs from the first): its
 * stretch of the source starts with the frame shown at s_k and ends a frame past the one shown at
 * s_k+1, its `fps` starts at s_k and its frames are trimmed at s_k+1. So each output frame shows the
 * source frame it shows in one pass, held as long.
 */
function planConstantRateCuts(frames: SourceFrames, o: ChunkPlan & { constantRate: number }): ChunkCut[] | null {
  const r = renderFrames(frames, o);
  if (!r) return null;
  const { num, den, usToTicks, ticksToUs, startUs, offsetTicks, inRender } = r;
  // The slot each source frame lands in (fps's rounding: to the nearest, halves away from zero).
  const slot = (i: number) => roundHalfAway(((inRender[i]! - roundHalfAway(offsetTicks)) * num * o.constantRate) / den);
  const first = slot(0);
  const total = slot(inRender.length - 1) + 1 - first;
  const gops = Math.floor(total / o.gopFrames);
  if (o.chunks < 2 || gops < o.chunks || inRender.length < 2) return null;
  const startGops = chunkStartGops(total / o.gopFrames, o);
  // Output slot, the source frame it shows, and the cut before that frame, for each chunk after the first.
  const starts: Array<{ slot: number; frame: number; fromUs: number }> = [{ slot: first, frame: 0, fromUs: startUs }];
  for (let k = 1; k < o.chunks; k++) {
    const gopIndex = startGops[k]!;
    const s = first + gopIndex * o.gopFrames;
    let shown = 0;
    while (shown + 1 < inRender.length && slot(shown + 1) <= s) shown++;
    if (shown <= starts[k - 1]!.frame) return null;
    const cut = cutBefore(r, shown);
    if (cut === undefined) return null;
    starts.push({ slot: s, frame: shown, fromUs: cut });
  }
  return starts.map((c, k) => {
    const next = starts[k + 1];
    // The frames it runs on into (OVERRUN_FRAMES), and a source frame past the one shown at its
    // end: fps then holds each frame to the end.
    const end = next ? next.slot + OVERRUN_FRAMES : 0;
    let shownAtEnd = next ? next.frame : 0;
    while (next && shownAtEnd + 1 < inRender.length && slot(shownAtEnd + 1) <= end) shownAtEnd++;
    const last = next ? Math.min(inRender.length - 1, shownAtEnd + 1) : inRender.length - 1;
    const gapTicks = last > 0 ? inRender[last]! - inRender[last - 1]! : usToTicks(1e6 / o.constantRate);
    const toUs = c.fromUs + Math.round(ticksToUs(inRender[last]! - inRender[c.frame]! + gapTicks / 2));
    return {
      fromUs: c.fromUs,
      toUs,
      shiftTicks: Math.round(usToTicks(c.fromUs - startUs)),
      clockUs: Math.round(((c.slot - first) * 1e6) / o.constantRate),
      slots: { from: c.slot, ...(next ? { to: end } : {}) },
      ...(next ? { keepFrames: next.slot - c.slot } : {}),
    };
  });
}

/** What encoding the render's sound costs next to rendering its video, as a share of the video's
 *  work: the first chunk, which also encodes the sound, gets that much less video (planChunkCuts).
 *  Measured on a 60 s 1080x1920 VIRAL render with libx264: AAC 2.3 CPU-s, the video 43 CPU-s. */
export const SOUND_SHARE_OF_RENDER = 0.05;

/** The render's sound over [start, end], encoded once as the single pass encodes it (the caller
 *  checks the source has sound). */
export async function encodeRenderAudio(
  ffmpegPath: string,
  o: {
    sourcePath: string;
    stream: number;
    start: number;
    end: number;
    out: string;
    signal?: AbortSignal;
    /** Jump cuts: the kept ranges (source clock), cut and joined as the single pass joins them. */
    edit?: Pick<JumpCutPlan, 'keep'> | null;
  },
): Promise<void> {
  const loudness = await measureLoudness(ffmpegPath, o.sourcePath, o);
  const soundIn = `0:a:${o.stream}`;
  const graph: string[] = [];
  if (o.edit) graph.push(`[${buildAudioCut(o.edit, o.start, graph, soundIn)}]${soundFilter(loudness)}[sound]`);
  const sound = o.edit ? ['-filter_complex', graph.join(';'), '-map', '[sound]'] : ['-map', soundIn, '-vn', '-af', soundFilter(loudness)];
  await runFfmpeg(
    ffmpegPath,
    [
      ...ffmpegPreamble({ progress: true }),
      ...sourceInput(o.sourcePath, sec(o.start), sec(o.end)),
      ...sound,
      ...SOUND_OUTPUT_ARGS,
      ...mp4Output(o.out, { faststart: false }),
    ],
    { durationSec: o.edit ? editedDuration(o.edit) : o.end - o.start, signal: o.signal },
  );
}

/** The chunk's first `frames` frames, as they are (its OVERRUN_FRAMES dropped). Every GOP is closed
 *  and the next one starts there: they are its first packets in decoding order, none after them. */
export async function keepFirstFrames(
  ffmpegPath: string,
  o: { input: string; out: string; frames: number; signal?: AbortSignal },
): Promise<void> {
  await run(
    ffmpegPath,
    [
      ...ffmpegPreamble({ progress: false }),
      ...inputGuard(),
      ...['-i', fileUrl(o.input), '-map', '0:v:0', '-c', 'copy', '-frames:v', String(o.frames)],
      ...mp4Output(o.out, { faststart: false }),
    ],
    { signal: o.signal, env: toolEnv() },
  );
}

/**
 * A chunk's video length, exact: its stream's duration in its own ticks, as seconds to the nanosecond.
 * The concat demuxer starts each file where the one before ends by that file's duration, which it
 * otherwise reads from the MP4 movie header, kept in milliseconds: at 29.97 fps a chunk of 121 frames
 * (4.0373667 s) reads 4.038 s, and every frame after the join lands 19 ticks late.
 */
async function videoDurationSec(ffprobePath: string, file: string, signal?: AbortSignal): Promise<string> {
  const { stdout } = await run(
    ffprobePath,
    ['-v', 'error', ...inputGuard(), '-select_streams', 'v:0', '-show_entries', 'stream=time_base,duration_ts', '-of', 'json', file],
    { signal, env: toolEnv() },
  );
  const stream = (JSON.parse(stdout) as { streams?: Array<{ time_base?: string; duration_ts?: number }> }).streams?.[0];
  const [num, den] = (stream?.time_base ?? '').split('/').map(Number);
  const ticks = Number(stream?.duration_ts);
  if (!(num! > 0 && den! > 0 && ticks > 0)) throw new Error(`the chunk ${path.basename(file)} has no video duration`);
  return ((ticks * num!) / den!).toFixed(9);
}

/** The chunks' video streams joined as they are, with the sound (if any): the finished render. */
export async function joinChunks(
  tools: { ffmpegPath: string; ffprobePath: string },
  o: { chunkPaths: string[]; audioPath: string | null; out: string; workDir: string; signal?: AbortSignal },
): Promise<void> {
  const { ffmpegPath } = tools;
  const list = path.join(o.workDir, 'chunks.txt');
  const durations = await Promise.all(o.chunkPaths.map((p) => videoDurationSec(tools.ffprobePath, p, o.signal)));
  // The concat demuxer's quoting: a ' in a path is closed, escaped and reopened. Each chunk's exact
  // duration places the next one (videoDurationSec).
  await writeFile(
    list,
    o.chunkPaths.map((p, i) => `file '${path.resolve(p).replace(/'/g, "'\\''")}'\nduration ${durations[i]}\n`).join(''),
    'utf8',
  );
  await run(
    ffmpegPath,
    [
      ...ffmpegPreamble({ progress: false }),
      // Chunks are read as MP4 only (concat hands its whitelists to each file it opens).
      '-f',
      'concat',
      '-safe',
      '0',
      '-protocol_whitelist',
      'file',
      '-format_whitelist',
      'concat,mov,mp4,m4a,3gp,3g2,mj2',
      '-i',
      list,
      ...(o.audioPath ? [...inputGuard(), '-i', fileUrl(o.audioPath)] : []),
      '-map',
      '0:v:0',
      ...(o.audioPath ? ['-map', '1:a:0'] : []),
      '-c',
      'copy',
      ...mp4Output(o.out, { faststart: true }),
    ],
    { signal: o.signal, env: toolEnv() },
  );
}
