import { spawn } from 'node:child_process';
import { toolEnv } from '@shorts/common/media/tools';
import { readdir } from 'node:fs/promises';
import path from 'node:path';

/** yt-dlp arguments: one video (never a playlist), at most 1080p, merged to MP4 by our ffmpeg,
 *  with the plan's size cap enforced by yt-dlp itself. */
export function buildYtDlpArgs(videoId: string, outDir: string, opts: { ffmpegPath: string; maxBytes: number }): string[] {
  return [
    '--no-playlist',
    '--no-progress',
    '--newline',
    '--no-warnings',
    '--restrict-filenames',
    '-f',
    'bv*[height<=1080][ext=mp4]+ba[ext=m4a]/bv*[height<=1080]+ba/b[height<=1080]/b',
    '--merge-output-format',
    'mp4',
    '--max-filesize',
    String(opts.maxBytes),
    '--ffmpeg-location',
    opts.ffmpegPath,
    '-o',
    path.join(outDir, 'youtube-%(id)s.%(ext)s'),
    '--progress-template',
    'download:progress %(progress._percent_str)s',
    '--',
    `https://www.youtube.com/watch?v=${videoId}`,
  ];
}

export class YoutubeDownloadError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/** Downloads one YouTube video with yt-dlp; returns the local file. */
export async function downloadYoutube(
  ytDlpPath: string,
  videoId: string,
  outDir: string,
  opts: { ffmpegPath: string; maxBytes: number; signal?: AbortSignal; onProgress?(fraction: number): void },
): Promise<string> {
  const args = buildYtDlpArgs(videoId, outDir, opts);
  const stderr: string[] = [];
  const code = await new Promise<number>((resolve, reject) => {
    const child = spawn(ytDlpPath, args, { signal: opts.signal, stdio: ['ignore', 'pipe', 'pipe'], env: toolEnv() });
    child.on('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'ENOENT' ? new YoutubeDownloadError(`yt-dlp is not installed on this agent (${ytDlpPath})`, true) : err),
    );
    child.stdout.on('data', (buf: Buffer) => {
      const m = buf.toString().match(/progress\s+([\d.]+)%/);
      if (m) opts.onProgress?.(Number(m[1]) / 100);
    });
    child.stderr.on('data', (buf: Buffer) => stderr.push(buf.toString()));
    child.on('close', (c) => resolve(c ?? 1));
  });
  const text = stderr.join('').trim();
  if (code !== 0) {
    if (/Video unavailable|Private video|removed|not available|Sign in to confirm/i.test(text)) {
      throw new YoutubeDownloadError(`YouTube video ${videoId} is not available: ${text.split('\n').pop()}`, false);
    }
    throw new YoutubeDownloadError(`yt-dlp failed for ${videoId}: ${text.split('\n').slice(-2).join(' ') || `exit ${code}`}`, true);
  }
  const file = (await readdir(outDir)).find((f) => f.startsWith(`youtube-${videoId}`) && f.endsWith('.mp4'));
  if (!file) throw new YoutubeDownloadError(`YouTube video ${videoId} is larger than this plan allows (${opts.maxBytes} bytes)`, false);
  return path.join(outDir, file);
}
