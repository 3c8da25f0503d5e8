// Running ffmpeg and ffprobe: progress from `-progress pipe:1`, errors with ffmpeg's own last words.
import { probeFile, type FfprobeStream } from '@shorts/common/media/ffprobe';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { inputGuard } from '@shorts/common/media/input-guard';
import { processMediaTools, toolEnv } from '@shorts/common/media/tools';
import { SDR_BT709, sourceColourOf, type SourceColour } from './colour.js';
import { mirrorFilterOf } from './orientation.js';
import type { SourceExtension } from '@shorts/common/tasks/analyze-video';

const STDERR_LINES = 20;

export class FfmpegError extends Error {
  constructor(
    message: string,
    readonly exitCode: number | null,
    readonly stderrTail: string[],
  ) {
    super(stderrTail.length ? `${message}:\n${stderrTail.join('\n')}` : message);
    this.name = 'FfmpegError';
  }

  /**
   * The filter graph could not be set up (a filter refused its inputs or options, or does not
   * exist): the same arguments on the same file fail the same way on every agent, so trying again
   * only delays the answer. A graph that failed for want of memory is not counted: that is the host's.
   */
  get graphRefused(): boolean {
    const text = this.stderrTail.join('\n');
    return GRAPH_REFUSED.some((re) => re.test(text)) && !/Cannot allocate memory|Resource temporarily unavailable/i.test(text);
  }

  /** ffmpeg's own complaint, as "filter: what it said" (e.g. "mergeplanes: input #1 link in1 SAR
   *  3017:3000 does not match ..."), rather than the generic line ffmpeg ends with. */
  get reason(): string {
    for (const line of this.stderrTail) {
      const m = line.match(/^\[(?:Parsed_([A-Za-z0-9_]+?)_\d+|AVFilterGraph) @ 0x[0-9a-f]+\] (.+)$/);
      if (m && !/^Failed to configure/.test(m[2]!)) return m[1] ? `${m[1]}: ${m[2]}` : m[2]!;
    }
    return this.stderrTail.at(-1) ?? this.message;
  }
}

// What ffmpeg 4 to 7 print when a graph cannot be configured, at start or when the first frames
// arrive (ffmpeg 5+ configures the graph from the decoded frames).
const GRAPH_REFUSED = [
  /Error initializing complex filters/,
  /Error (?:re)?initializing filters?/i,
  /Error configuring (?:the )?filter ?graph/i,
  /Failed to configure (?:output|input) pad/,
  /No such filter: /,
  /Error initializing filter '/,
];

export interface RunFfmpegOptions {
  durationSec: number; // output duration, to turn out_time into a fraction
  onProgress?: (fraction: number) => void; // 0..1, never decreasing, ends with 1 on success
  signal?: AbortSignal;
}

/** Runs ffmpeg to completion. Expects `-progress pipe:1` among the args for progress reports. */
export function runFfmpeg(ffmpegPath: string, args: string[], opts: RunFfmpegOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) return reject(opts.signal.reason ?? new Error('aborted'));
    const child = spawn(ffmpegPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: toolEnv() });
    const tail: string[] = [];
    let best = 0;
    const report = (f: number) => {
      const clamped = Math.min(1, Math.max(0, f));
      if (clamped > best) {
        best = clamped;
        opts.onProgress?.(best);
      }
    };

    lines(child.stdout, (line) => {
      const eq = line.indexOf('=');
      if (eq < 0 || !(opts.durationSec > 0)) return;
      const key = line.slice(0, eq);
      const value = line.slice(eq + 1).trim();
      // out_time_ms is microseconds too (an old ffmpeg naming slip kept for compatibility).
      if (key === 'out_time_us' || key === 'out_time_ms') {
        const us = Number(value);
        if (Number.isFinite(us) && us > 0) report(us / 1e6 / opts.durationSec);
      }
    });
    lines(child.stderr, (line) => {
      // The static build's fontconfig complains about every system config file; that is noise.
      if (!line.trim() || line.startsWith('Fontconfig warning')) return;
      tail.push(line);
      if (tail.length > STDERR_LINES) tail.shift();
    });

    const onAbort = () => child.kill('SIGKILL');
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (err) => {
      opts.signal?.removeEventListener('abort', onAbort);
      reject(new FfmpegError(`could not start ffmpeg (${err.message})`, null, []));
    });
    child.on('close', (code, sig) => {
      opts.signal?.removeEventListener('abort', onAbort);
      if (opts.signal?.aborted) return reject(opts.signal.reason ?? new Error('aborted'));
      if (code === 0) {
        report(1);
        return resolve();
      }
      reject(new FfmpegError(`ffmpeg exited with ${code ?? sig}`, code, tail));
    });
  });
}

function lines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buf += chunk;
    let nl: number;
    while ((nl = buf.search(/\r?\n|\r/)) >= 0) {
      onLine(buf.slice(0, nl));
      buf = buf.slice(nl + (buf[nl] === '\r' && buf[nl + 1] === '\n' ? 2 : 1));
    }
  });
  stream.on('end', () => buf && onLine(buf));
}

// ---- ffprobe ------------------------------------------------------------------------------------

export interface ProbeResult {
  durationSec: number;
  width: number;
  height: number;
  hasVideo: boolean;
  hasAudio: boolean;
  videoCodec: string | null;
  audioCodec: string | null;
  pixelFormat: string | null;
  /** Average frame rate (frames over duration). */
  fps: number | null;
  /** The larger of the average and the base (r_frame_rate) rate: a file that alternates bursts of
   *  frames with long gaps averages low, yet its bursts must be decoded at the base rate. */
  peakFps: number | null;
  formatName: string;
  sizeBytes: number;
  bitRate: number | null;
  /** The picture's colour (colour.ts): what it takes to show it as BT.709 SDR. */
  colour: SourceColour;
  /** Coded as fields (1080i broadcast, camcorders): deinterlaced before anything is drawn. */
  interlaced: boolean;
  /** The sound streams in file order (`0:a:<n>` is the n-th), with their channel counts. */
  audioStreams: Array<{ channels: number; codec: string | null }>;
}

const run = promisify(execFile);

/** Probes a local file (only the file and pipe protocols are allowed, so a crafted file cannot make it fetch). */
export async function ffprobe(file: string, opts: { ffprobePath?: string; signal?: AbortSignal } = {}): Promise<ProbeResult> {
  const info = await probeFile(file, opts);
  const streams = info.streams ?? [];
  const video = streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic);
  const audio = streams.find((s) => s.codec_type === 'audio');
  const num = (v: unknown) => (v === undefined || v === null || v === 'N/A' || !Number.isFinite(Number(v)) ? null : Number(v));
  // Phones store portrait video as landscape frames plus a rotation; ffmpeg turns the frames when
  // it decodes them, so every crop and size downstream must use the turned (display) dimensions.
  // A matrix that also mirrors is undone by the graph itself (orientation.ts).
  const orient = mirrorFilterOf(video);
  const quarterTurn = orient ? orient.startsWith('transpose') : Math.abs(rotationOf(video)) % 180 === 90;
  const tone = video ? sourceColourOf(video, isHdr(video) ? await firstFrameSideData(file, opts) : []) : SDR_BT709;
  const colour = orient ? { ...tone, orient } : tone;
  return {
    durationSec: num(info.format?.duration) ?? num(video?.duration) ?? 0,
    width: (quarterTurn ? video?.height : video?.width) ?? 0,
    height: (quarterTurn ? video?.width : video?.height) ?? 0,
    hasVideo: Boolean(video),
    hasAudio: Boolean(audio),
    videoCodec: video?.codec_name ?? null,
    audioCodec: audio?.codec_name ?? null,
    pixelFormat: video?.pix_fmt ?? null,
    fps: video ? (rate(video.avg_frame_rate) ?? rate(video.r_frame_rate)) : null,
    peakFps: video ? peakRate(video) : null,
    formatName: info.format?.format_name ?? 'unknown',
    sizeBytes: num(info.format?.size) ?? 0,
    bitRate: num(info.format?.bit_rate),
    colour,
    interlaced: ['tt', 'bb', 'tb', 'bt'].includes(String(video?.field_order ?? '')),
    audioStreams: streams
      .filter((s) => s.codec_type === 'audio')
      .map((s) => ({ channels: Number(s.channels) || 0, codec: s.codec_name ?? null })),
  };
}

const isHdr = (video: FfprobeStream) => video.color_transfer === 'smpte2084' || video.color_transfer === 'arib-std-b67';

/** HDR10's light levels ride in the first frame's SEI, not in the stream header ffprobe prints. */
async function firstFrameSideData(
  file: string,
  opts: { ffprobePath?: string; signal?: AbortSignal },
): Promise<Array<Record<string, unknown>>> {
  const { stdout } = await run(
    opts.ffprobePath ?? processMediaTools().ffprobePath,
    ['-v', 'error', ...inputGuard(), '-select_streams', 'v:0', '-read_intervals', '%+#1', '-show_frames', '-print_format', 'json', file],
    { signal: opts.signal, maxBuffer: 4 * 1024 * 1024, env: toolEnv() },
  ).catch(() => ({ stdout: '{}' }));
  const frames = (JSON.parse(stdout) as { frames?: Array<{ side_data_list?: Array<Record<string, unknown>> }> }).frames ?? [];
  return frames[0]?.side_data_list ?? [];
}

/**
 * How long the media really is: every packet of every stream is read (copied to the null muxer,
 * nothing decoded) and the furthest timestamp reached is the length. A container's declared
 * duration is the writer's claim; this is what a decoder will go through. 0 when nothing could be read.
 */
export async function measureMediaDuration(ffmpegPath: string, file: string, signal?: AbortSignal): Promise<number> {
  const { stdout } = await run(
    ffmpegPath,
    [
      '-nostdin',
      '-hide_banner',
      '-loglevel',
      'error',
      ...inputGuard(),
      '-i',
      file,
      '-map',
      '0:v?',
      '-map',
      '0:a?',
      '-c',
      'copy',
      '-f',
      'null',
      '-progress',
      'pipe:1',
      '-nostats',
      '-',
    ],
    { signal, maxBuffer: 64 * 1024 * 1024, env: toolEnv() },
  );
  let us = 0;
  for (const m of stdout.matchAll(/^out_time_us=(\d+)$/gm)) us = Math.max(us, Number(m[1]));
  return us / 1e6;
}

/** Degrees a player turns the stream: display-matrix side data (newer ffprobe) or the old `rotate` tag. */
function rotationOf(stream: FfprobeStream | undefined): number {
  const side = stream?.side_data_list?.find((d) => d.rotation !== undefined);
  const degrees = Number(side?.rotation ?? stream?.tags?.rotate ?? 0);
  return Number.isFinite(degrees) ? Math.round(degrees) : 0;
}

const WEBM_CODECS = new Set(['vp8', 'vp9', 'av1', 'opus', 'vorbis']);

/** The MIME type and file extension of a probed container, so a stored source is served as what it is. */
export function containerType(probe: Pick<ProbeResult, 'formatName' | 'videoCodec' | 'audioCodec'>): {
  contentType: string;
  extension: SourceExtension;
} {
  const format = probe.formatName.split(',');
  if (format.includes('mp4') || format.includes('mov')) return { contentType: 'video/mp4', extension: 'mp4' };
  if (format.includes('matroska') || format.includes('webm')) {
    const webm = [probe.videoCodec, probe.audioCodec].every((c) => c === null || WEBM_CODECS.has(c));
    return webm ? { contentType: 'video/webm', extension: 'webm' } : { contentType: 'video/x-matroska', extension: 'mkv' };
  }
  const others: Record<string, [string, SourceExtension]> = {
    avi: ['video/x-msvideo', 'avi'],
    flv: ['video/x-flv', 'flv'],
    mpegts: ['video/mp2t', 'ts'],
    mpeg: ['video/mpeg', 'mpg'],
    ogg: ['video/ogg', 'ogv'],
    asf: ['video/x-ms-asf', 'asf'],
    mxf: ['application/mxf', 'mxf'],
    nut: ['video/x-nut', 'nut'],
  };
  const [contentType, extension] = others[format[0]!] ?? ['application/octet-stream', 'bin'];
  return { contentType, extension };
}

function peakRate(video: FfprobeStream): number | null {
  const avg = rate(video.avg_frame_rate);
  let base = rate(video.r_frame_rate);
  // A base rate equal to the stream's clock (1000/1 in a Matroska/WebM recording with irregular
  // frame times) says the timestamps are uneven, not that a thousand frames come each second.
  const tick = rate(video.time_base);
  if (base !== null && tick !== null && Math.abs(base * tick - 1) < 1e-9) base = null;
  if (avg === null) return base;
  return base === null ? avg : Math.max(avg, base);
}

function rate(r: unknown): number | null {
  if (typeof r !== 'string') return null;
  const [n, d] = r.split('/').map(Number);
  return n && d ? n / d : null;
}
