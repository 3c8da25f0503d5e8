import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { inputGuard } from './input-guard.js';
import { processMediaTools, toolEnv } from './tools.js';

const run = promisify(execFile);

/** What ffprobe says of a file (-show_format -show_streams), as it says it. */
export interface FfprobeJson {
  format?: Record<string, string>;
  streams?: FfprobeStream[];
}

/** One stream as ffprobe prints it: the fields read here typed as it prints them (numbers, rates as
 *  `n/d` strings, durations as decimal strings), any other as it comes. */
export interface FfprobeStream {
  /** Printed for every stream. */
  index: number;
  codec_type: string;
  /** Absent for a codec ffprobe does not know (some data streams). */
  codec_name?: string;
  width?: number;
  height?: number;
  pix_fmt?: string;
  duration?: string;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  time_base?: string;
  disposition?: Record<string, number>;
  tags?: Record<string, string>;
  side_data_list?: Array<Record<string, unknown>>;
  [field: string]: unknown;
}

/**
 * The one way ffprobe runs, on the agent and the coordinator alike: a local file only (the input
 * guard allows the file and pipe protocols and plain demuxers, so a crafted file cannot make it
 * fetch or read other files), with the tools' clean environment. Throws when ffprobe cannot read it.
 */
export async function probeFile(
  file: string,
  opts: {
    ffprobePath?: string;
    signal?: AbortSignal;
    timeoutMs?: number;
    /** Which demuxers are allowed: media (the default), or media and still images. */
    inputs?: 'media' | 'media-or-image';
  } = {},
): Promise<FfprobeJson> {
  const { stdout } = await run(
    opts.ffprobePath ?? processMediaTools().ffprobePath,
    ['-v', 'error', ...inputGuard(opts.inputs ?? 'media'), '-print_format', 'json', '-show_format', '-show_streams', file],
    { signal: opts.signal, timeout: opts.timeoutMs, maxBuffer: 16 * 1024 * 1024, env: toolEnv() },
  );
  return JSON.parse(stdout) as FfprobeJson;
}
