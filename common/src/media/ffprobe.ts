import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { inputGuard } from './input-guard.js';
import { processMediaTools, toolEnv } from './tools.js';

const run = promisify(execFile);

/** What ffprobe says of a file (-show_format -show_streams), as it says it. */
export interface FfprobeJson {
  format?: Record<string, string>;
  streams?: Array<Record<string, any>>;
}

/**
 * The one way ffprobe runs, on the agent and the coordinator alike: a local file only (the input
 * guard allows the file and pipe protocols and plain demuxers, so a crafted file cannot make it
 * fetch or read other files), with the tools' clean environment. Throws when ffprobe cannot read it.
 */
export async function probeFile(file: string, opts: {
  ffprobePath?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Which demuxers are allowed: media (the default), or media and still images. */
  inputs?: 'media' | 'media-or-image';
} = {}): Promise<FfprobeJson> {
  const { stdout } = await run(opts.ffprobePath ?? processMediaTools().ffprobePath, [
    '-v', 'error', ...inputGuard(opts.inputs ?? 'media'), '-print_format', 'json', '-show_format', '-show_streams', file,
  ], { signal: opts.signal, timeout: opts.timeoutMs, maxBuffer: 16 * 1024 * 1024, env: toolEnv() });
  return JSON.parse(stdout) as FfprobeJson;
}
