import { execFile } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { promisify } from 'node:util';
import path from 'node:path';
import ffmpegInstaller from '@ffmpeg-installer/ffmpeg';
import ffprobeInstaller from '@ffprobe-installer/ffprobe';
import { processMediaTools, type MediaTools } from '@shorts/common/media/tools';
import { listener } from './http.js';
import type { Parsed } from './parsed.js';

const run = promisify(execFile);

// Two ffmpegs: the bundled build makes and measures the tests' own media (the same build on every
// machine), while the agents run the one the agent picks on this machine.

/** The bundled ffmpeg (@ffmpeg-installer), for the tests' own media. */
export const FFMPEG = ffmpegInstaller.path;
/** The bundled ffprobe (@ffprobe-installer), for reading what a render wrote. */
export const FFPROBE = ffprobeInstaller.path;

/** The ffmpeg and ffprobe an agent started from this process runs: FFMPEG_PATH, else a system ffmpeg 5+, else the bundled build. */
export const agentTools = (): MediaTools => processMediaTools();

/**
 * An executable bash script at `file` standing in for ffmpeg: it runs `before`, then execs `ffmpegPath`
 * with `args` (the arguments it was given, unless the script rewrote them). Its path.
 */
export async function ffmpegWrapper(file: string, ffmpegPath: string, before: string, args = '"$@"'): Promise<string> {
  await writeFile(file, `#!/bin/bash\n${before}\nexec ${ffmpegPath} ${args}\n`);
  await chmod(file, 0o755);
  return file;
}

/** A small real video: a test pattern (`testsrc` at 25 fps unless asked otherwise), or a flat
 *  `colour` (an ffmpeg colour: `red`, `0x808080`), with a sine tone (none when `toneHz` is null);
 *  `gop` frames from one keyframe to the next (x264's default if not given). */
export async function makeTestVideo(
  out: string,
  opts: {
    seconds?: number;
    width?: number;
    height?: number;
    fps?: number;
    pattern?: 'testsrc' | 'testsrc2';
    colour?: string;
    toneHz?: number | null;
    gop?: number;
  } = {},
): Promise<string> {
  const { seconds = 2, width = 320, height = 180, fps = 25, pattern = 'testsrc', toneHz = 440 } = opts;
  const picture = opts.colour
    ? `color=c=${opts.colour}:s=${width}x${height}:r=${fps}:d=${seconds}`
    : `${pattern}=size=${width}x${height}:rate=${fps}:duration=${seconds}`;
  return encodeTestVideo(out, [picture], {
    tone: toneHz === null ? undefined : `sine=frequency=${toneHz}:duration=${seconds}`,
    gop: opts.gop,
  });
}

/** Left half pure red, right half pure blue (each half 640x720 at 25 fps unless `half` says
 *  otherwise): which half a frame shows is its colour. With a 300 Hz tone unless `toneHz` is null;
 *  `gop` as makeTestVideo's. */
export async function makeHalvesVideo(
  out: string,
  opts: { seconds: number; toneHz?: number | null; half?: { width: number; height: number }; gop?: number },
): Promise<string> {
  const { seconds, toneHz = 300, half: size = { width: 640, height: 720 } } = opts;
  const half = (colour: string) => `color=c=${colour}:s=${size.width}x${size.height}:r=25:d=${seconds}`;
  return encodeTestVideo(out, [half('red'), half('blue')], {
    tone: toneHz === null ? undefined : `sine=frequency=${toneHz}:duration=${seconds}`,
    graph: '[0:v][1:v]hstack=inputs=2[v]',
    gop: opts.gop,
  });
}

/** Shares of red and blue pixels in the `w` x `h` frame of `file` at `t` (a render of makeHalvesVideo's halves). */
export async function redBlueShares(file: string, t: number, w: number, h: number): Promise<{ red: number; blue: number }> {
  const { stdout } = await run(
    FFMPEG,
    ['-v', 'error', '-ss', String(t), '-i', file, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'],
    { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
  );
  if (stdout.length !== w * h * 3) throw new Error(`frame size ${stdout.length}`);
  let red = 0;
  let blue = 0;
  for (let i = 0; i < stdout.length; i += 3) {
    const [r, g, b] = [stdout[i]!, stdout[i + 1]!, stdout[i + 2]!];
    if (r > 180 && g < 80 && b < 80) red++;
    if (b > 180 && g < 80 && r < 80) blue++;
  }
  return { red: red / (w * h), blue: blue / (w * h) };
}

/** The lavfi `pictures` (joined by `graph` into `[v]` when there are several) and the lavfi sound
 *  `tone`, as H.264 at `out`: `videoArgs` (a filter, a sync mode) before the encoder's, and the sound
 *  as AAC cut to the picture's length unless `audioArgs` say otherwise. */
export async function encodeTestVideo(
  out: string,
  pictures: string[],
  o: { tone?: string; graph?: string; gop?: number; videoArgs?: string[]; audioArgs?: string[] },
): Promise<string> {
  const lavfi = (source: string) => ['-f', 'lavfi', '-i', source];
  const map = o.graph ? ['-filter_complex', o.graph, '-map', '[v]', ...(o.tone ? ['-map', `${pictures.length}:a`] : [])] : [];
  await run(FFMPEG, [
    '-y',
    '-hide_banner',
    '-loglevel',
    'error',
    ...pictures.flatMap(lavfi),
    ...(o.tone ? lavfi(o.tone) : []),
    ...map,
    ...(o.videoArgs ?? []),
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    ...(o.gop ? ['-g', String(o.gop)] : []),
    '-pix_fmt',
    'yuv420p',
    ...(o.tone ? (o.audioArgs ?? ['-c:a', 'aac', '-shortest']) : []),
    out,
  ]);
  return out;
}

export interface MediaServer {
  url(name: string): string;
  close(): Promise<void>;
  requests: string[];
}

/** Serves files on 127.0.0.1; `bytesPerSec` trickles the body so a download takes a while; `ranges`
 *  answers `Range: bytes=a-b` with a 206, as most web servers and CDNs do (without it: ignored). */
export async function serveFiles(
  files: Record<string, string>,
  opts: { bytesPerSec?: number; redirects?: Record<string, string>; ranges?: boolean } = {},
): Promise<MediaServer> {
  const requests: string[] = [];
  const server = http.createServer(
    listener(async (req, res) => {
      requests.push(req.url ?? '');
      const name = (req.url ?? '/').slice(1).split('?')[0]!;
      const redirect = opts.redirects?.[name];
      if (redirect) {
        res.writeHead(302, { location: redirect }).end();
        return;
      }
      const file = files[name];
      if (!file) {
        res.writeHead(404).end('not found');
        return;
      }
      const { size } = await stat(file);
      const range = opts.ranges ? /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '') : null;
      const start = range ? Number(range[1]) : 0;
      const end = range?.[2] ? Math.min(Number(range[2]) + 1, size) : size;
      if (range && start >= size) {
        res.writeHead(416, { 'content-range': `bytes */${size}` }).end();
        return;
      }
      res.writeHead(range ? 206 : 200, {
        'content-type': 'application/octet-stream',
        'content-length': end - start,
        ...(opts.ranges ? { 'accept-ranges': 'bytes' } : {}),
        ...(range ? { 'content-range': `bytes ${start}-${end - 1}/${size}` } : {}),
      });
      const stream = createReadStream(file, { highWaterMark: 16 * 1024, ...(range ? { start, end: end - 1 } : {}) });
      if (!opts.bytesPerSec) {
        stream.pipe(res);
        return;
      }
      const perChunkMs = (16 * 1024 * 1000) / opts.bytesPerSec;
      for await (const chunk of stream) {
        if (res.destroyed) break;
        res.write(chunk);
        await new Promise((r) => setTimeout(r, perChunkMs));
      }
      res.end();
    }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    requests,
    url: (name) => `http://127.0.0.1:${port}/${name}`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * Writes the display matrix into the first track's header (tkhd: the video, ffmpeg writes it first).
 * Neither ffmpeg here (the bundled 2018 build, the system 5.1) can write a matrix that mirrors
 * (`-display_hflip` is ffmpeg 6's): a box edit it is.
 */
export async function withDisplayMatrix(file: string, out: string, [a, b, c, d]: readonly number[]): Promise<void> {
  const bytes = await readFile(file);
  const at = bytes.indexOf('tkhd');
  if (at < 0) throw new Error('no tkhd box');
  // After the size and type: version and flags, times, track id, duration, layer, group, volume.
  const matrix = at - 4 + (bytes[at + 4] === 1 ? 60 : 48);
  const fixed = [a! * 65536, b! * 65536, 0, c! * 65536, d! * 65536, 0, 0, 0, 1 << 30];
  fixed.forEach((v, i) => bytes.writeInt32BE(v, matrix + i * 4));
  await writeFile(out, bytes);
}

/**
 * 30 s of audio whose packets all carry timestamp 0 (the `setts` bitstream filter, so `ffmpegPath`
 * must be an ffmpeg 5+): read packet by packet it ends almost at once, yet it decodes to 30 s, and a
 * `-t` limit, which works on timestamps, does not stop it. Written as zero-ts.mkv in `dir`.
 */
export async function zeroTimestampAudio(ffmpegPath: string, dir: string): Promise<string> {
  const ffmpeg = (...args: string[]) => run(ffmpegPath, ['-y', '-hide_banner', '-loglevel', 'error', ...args]);
  const honest = path.join(dir, 'zero-honest.mkv');
  await ffmpeg(
    ...['-f', 'lavfi', '-i', 'color=c=gray:s=64x64:r=25:d=1', '-f', 'lavfi', '-i', 'anoisesrc=d=30:c=pink:r=8000:a=0.05'],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'pcm_u8', '-frame_size', '8000', honest],
  );
  const out = path.join(dir, 'zero-ts.mkv');
  await ffmpeg('-i', honest, '-map', '0', '-c', 'copy', '-bsf:a', 'setts=pts=0:dts=0', out);
  return out;
}

/** ffprobe's JSON answer for `file` with the given options. */
export async function probeJson(file: string, ...args: string[]): Promise<Parsed> {
  const { stdout } = await run(FFPROBE, ['-v', 'error', '-of', 'json', ...args, file], { maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout);
}

/** What a viewer's player reads of a file: each video frame's timestamp, the streams' starts and lengths. */
export async function playerTiming(file: string) {
  const packets = (await probeJson(file, '-select_streams', 'v:0', '-show_entries', 'packet=pts,duration')).packets as Array<{
    pts: number;
    duration: number;
  }>;
  const info = await probeJson(file, '-show_entries', 'stream=codec_type,start_time,duration,time_base:format=duration');
  const stream = (type: string) => info.streams.find((s: { codec_type: string }) => s.codec_type === type);
  return {
    framePts: packets.map((p) => p.pts).sort((a, b) => a - b),
    duration: info.format.duration,
    video: stream('video'),
    audio: stream('audio'),
  };
}

/** Per-frame PSNR (dB; 100 for an identical frame) of a render against a reference, via a stats file at `statsPath`. */
export async function psnrPerFrame(file: string, reference: string, statsPath: string): Promise<number[]> {
  await run(FFMPEG, ['-v', 'error', '-i', file, '-i', reference, '-lavfi', `[0:v][1:v]psnr=stats_file=${statsPath}`, '-f', 'null', '-']);
  return (await readFile(statsPath, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => {
      const v = /psnr_avg:(\S+)/.exec(l)![1]!;
      return v === 'inf' ? 100 : Number(v);
    });
}
