// Frames of a stretch of the source, decoded by ffmpeg at a few per second straight into memory
// through a pipe (raw RGB24, scaled for analysis): no temporary image files.
import { toolEnv } from '@shorts/common/media/tools';
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { Readable } from 'node:stream';
import { inputGuard } from '@shorts/common/media/input-guard';
import { FfmpegError } from '../media/ffmpeg.js';
import { orientInputArgs } from '../media/orientation.js';
import type { RgbImage } from './image.js';
import type { SceneScore } from './shots.js';

export interface SampleRange {
  start: number;
  end: number;
}

export interface SampledFrame {
  /** Seconds on the source's clock. */
  time: number;
  image: RgbImage;
  /** The same frame at `detail` size, when asked for: what small faces' mouths are read from. */
  detail?: RgbImage;
}

/**
 * The analysis size: the short side brought down to `shortSide` (never up), the aspect kept, both even.
 * At 360 a face of a 1280x720 two-person shot keeps about 80-100 px, enough for the detector's tiles
 * and for a mouth region of some 40x25 px, while decoding output and detector input stay small.
 */
export function analysisSize(sourceWidth: number, sourceHeight: number, shortSide = 360): { width: number; height: number } {
  const scale = Math.min(1, shortSide / Math.min(sourceWidth, sourceHeight));
  const even = (v: number) => Math.max(2, 2 * Math.round((v * scale) / 2));
  return { width: even(sourceWidth), height: even(sourceHeight) };
}

/**
 * ffmpeg arguments that write `fps` frames a second of [start, end) as raw RGB24 to stdout; with
 * `sceneScores`, also the scene score of every decoded frame (ffmpeg decodes them all for the fps
 * filter anyway) as `metadata` print lines to file descriptor 3: a cut is then placed on its exact
 * frame, not on the sampling grid.
 */
export function frameSamplerArgs(
  sourceFile: string,
  range: SampleRange,
  fps: number,
  size: { width: number; height: number },
  sceneScores = false,
  detail?: { width: number; height: number },
  toBt709?: string | null,
  orient?: string | null,
): string[] {
  // HDR is tone-mapped on the small frames, where it costs least (colour.ts).
  const sdr = toBt709 ? `,${toBt709}` : '';
  // A display matrix that mirrors: the frames are decoded as stored and turned here (orientation.ts),
  // before anything is sized from the display dimensions.
  const head = orient ? `${orient},` : '';
  // With a detail size, each frame goes out as one picture: the detail frame on top, the analysis
  // frame below it padded to the same width, so one pipe carries both in step.
  const sampled = detail
    ? `${head}fps=${fps},split=2[full][small];[full]scale=${detail.width}:${detail.height}:flags=area[detail];` +
      `[small]scale=${size.width}:${size.height}:flags=area,pad=${detail.width}:${size.height}[analysis];[detail][analysis]vstack${sdr}`
    : `${head}fps=${fps},scale=${size.width}:${size.height}:flags=area${sdr}`;
  return [
    '-hide_banner',
    '-loglevel',
    'error',
    '-nostdin',
    // Input seeking lands on the keyframe before `start` and decodes (and drops) up to it, so frame 0
    // is at `start` exactly; timestamps then count from 0.
    ...inputGuard(),
    '-ss',
    range.start.toFixed(3),
    '-t',
    (range.end - range.start).toFixed(3),
    ...orientInputArgs(orient),
    '-i',
    sourceFile,
    ...(sceneScores
      ? [
          // The score compares each frame with the one before at 64x36: enough to see a cut, and
          // about 5 % of what decoding the frames costs.
          '-filter_complex',
          `[0:v:0]${head}split=2[sampled][scored];[sampled]${sampled.slice(head.length)}[frames];` +
            `[scored]scale=64:36:flags=area${sdr},select='gte(scene,0)',metadata=mode=print:key=lavfi.scene_score:file='pipe\\:3'[scores]`,
          '-map',
          '[frames]',
          '-f',
          'rawvideo',
          '-pix_fmt',
          'rgb24',
          'pipe:1',
          '-map',
          '[scores]',
          '-f',
          'null',
          '-',
        ]
      : detail
        ? ['-filter_complex', `[0:v:0]${sampled}[frames]`, '-map', '[frames]', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1']
        : ['-map', '0:v:0', '-an', '-sn', '-dn', '-vf', sampled, '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1']),
  ];
}

/** Reads metadata print lines (`frame:N pts:P pts_time:T` then `lavfi.scene_score=S`) as they come. */
function sceneScoreReader(offset: number, into: SceneScore[]): (chunk: string) => void {
  let rest = '';
  let time: number | undefined;
  return (chunk) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      const t = /pts_time:(-?[\d.]+)/.exec(line);
      if (t) time = Number(t[1]);
      const v = /lavfi\.scene_score=([\d.]+)/.exec(line);
      if (v && time !== undefined) {
        into.push({ time: offset + time, score: Number(v[1]) });
        time = undefined;
      }
    }
  };
}

/**
 * Frames of `range` at `fps`, in order. The consumer pulls: while it works on a frame, the pipe fills
 * and ffmpeg waits, so memory stays at a few frames whatever the range's length.
 */
export async function* sampleFrames(
  ffmpegPath: string,
  sourceFile: string,
  range: SampleRange,
  opts: {
    fps: number;
    size: { width: number; height: number };
    /** A larger size to deliver each frame at too (SampledFrame.detail). */
    detail?: { width: number; height: number };
    signal?: AbortSignal;
    sceneScores?: SceneScore[];
    toBt709?: string | null;
    /** The source's display-matrix mirror (SourceColour.orient): the frames are shown as a player does. */
    orient?: string | null;
  },
): AsyncGenerator<SampledFrame> {
  opts.signal?.throwIfAborted();
  const { width, height } = opts.size;
  const detail = opts.detail;
  const frameBytes = detail ? detail.width * (detail.height + height) * 3 : width * height * 3;
  const scores = opts.sceneScores;
  const child = spawn(ffmpegPath, frameSamplerArgs(sourceFile, range, opts.fps, opts.size, !!scores, detail, opts.toBt709, opts.orient), {
    stdio: ['ignore', 'pipe', 'pipe', scores ? 'pipe' : 'ignore'],
    env: toolEnv(),
  }) as ChildProcessByStdio<null, Readable, Readable>;
  if (scores) {
    // File descriptor 3 was asked for as a pipe: the child's fourth stdio is its readable end.
    const scoreStream = child.stdio[3];
    if (!(scoreStream instanceof Readable)) {
      child.kill('SIGKILL');
      throw new FfmpegError('ffmpeg was started without its scene-score pipe (file descriptor 3)', null, []);
    }
    scoreStream.setEncoding('utf8');
    scoreStream.on('data', sceneScoreReader(range.start, scores));
  }
  const stderr: string[] = [];
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (s: string) => {
    stderr.push(...s.split('\n').filter(Boolean));
    if (stderr.length > 20) stderr.splice(0, stderr.length - 20);
  });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', (err) => reject(new FfmpegError(`could not start ffmpeg (${err.message})`, null, [])));
    child.on('close', (code) => resolve(code));
  });
  exited.catch(() => undefined);
  const onAbort = () => child.kill('SIGKILL');
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  let index = 0;
  let frame = new Uint8Array(frameBytes);
  let filled = 0;
  try {
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      let offset = 0;
      while (offset < chunk.length) {
        const n = Math.min(frameBytes - filled, chunk.length - offset);
        frame.set(chunk.subarray(offset, offset + n), filled);
        filled += n;
        offset += n;
        if (filled === frameBytes) {
          opts.signal?.throwIfAborted();
          const time = range.start + index / opts.fps;
          yield detail ? splitDetail(frame, detail, opts.size, time) : { time, image: { width, height, data: frame } };
          index++;
          frame = new Uint8Array(frameBytes);
          filled = 0;
        }
      }
    }
    const code = await exited;
    opts.signal?.throwIfAborted();
    if (code !== 0) throw new FfmpegError(`ffmpeg exited with ${code} while sampling frames`, code, stderr);
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    // The consumer may stop early (an error, an abort): do not leave ffmpeg blocked on a full pipe.
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

/** One stacked picture (detail on top, the analysis frame padded below) as its two frames. */
function splitDetail(
  stacked: Uint8Array,
  detail: { width: number; height: number },
  size: { width: number; height: number },
  time: number,
): SampledFrame {
  const detailBytes = detail.width * detail.height * 3;
  const image = new Uint8Array(size.width * size.height * 3);
  const rowBytes = size.width * 3;
  for (let y = 0; y < size.height; y++) {
    const from = detailBytes + y * detail.width * 3;
    image.set(stacked.subarray(from, from + rowBytes), y * rowBytes);
  }
  return {
    time,
    image: { width: size.width, height: size.height, data: image },
    detail: { width: detail.width, height: detail.height, data: stacked.subarray(0, detailBytes) },
  };
}
