import { execFile } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { chmod, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { promisify } from 'node:util';
import ffmpegInstaller from '@ffmpeg-installer/ffmpeg';
import ffprobeInstaller from '@ffprobe-installer/ffprobe';
import { processMediaTools, type MediaTools } from '@shorts/common/media/tools';
import { listener } from './http.js';

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

/** A small real video: a test pattern (`testsrc` at 25 fps unless asked otherwise) with a sine
 *  tone; `gop` frames from one keyframe to the next (x264's default if not given). */
export async function makeTestVideo(
  out: string,
  opts: {
    seconds?: number;
    width?: number;
    height?: number;
    fps?: number;
    pattern?: 'testsrc' | 'testsrc2';
    toneHz?: number;
    gop?: number;
  } = {},
): Promise<string> {
  const { seconds = 2, width = 320, height = 180, fps = 25, pattern = 'testsrc', toneHz = 440 } = opts;
  await run(FFMPEG, [
    '-y',
    '-hide_banner',
    '-loglevel',
    'error',
    '-f',
    'lavfi',
    '-i',
    `${pattern}=size=${width}x${height}:rate=${fps}:duration=${seconds}`,
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=${toneHz}:duration=${seconds}`,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    ...(opts.gop ? ['-g', String(opts.gop)] : []),
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-shortest',
    out,
  ]);
  return out;
}

export interface MediaServer {
  url(name: string): string;
  close(): Promise<void>;
  requests: string[];
}

/** Serves files on 127.0.0.1; `bytesPerSec` trickles the body so a download takes a while. */
export async function serveFiles(
  files: Record<string, string>,
  opts: { bytesPerSec?: number; redirects?: Record<string, string> } = {},
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
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': size });
      const stream = createReadStream(file, { highWaterMark: 16 * 1024 });
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
