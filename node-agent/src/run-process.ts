// Running a binary to completion with its output kept (the audio extraction, the whisper helper).
import { spawn } from 'node:child_process';

export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a binary to completion, keeping output; an abort kills it and rejects with the abort reason. */
export function runProcess(
  bin: string,
  args: string[],
  signal?: AbortSignal,
  opts: { maxOutput?: number; env?: NodeJS.ProcessEnv; onStdoutLine?: (line: string) => void } = {},
): Promise<ProcessResult> {
  const max = opts.maxOutput ?? 64 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(opts.env ? { env: opts.env } : {}) });
    let stdout = '';
    let stderr = '';
    // With a line reader, each complete stdout line is handed over as it arrives (progress).
    let pendingLine = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      if (stdout.length < max) stdout += d;
      if (!opts.onStdoutLine) return;
      const lines = (pendingLine + d).split('\n');
      pendingLine = lines.pop() ?? '';
      lines.forEach(opts.onStdoutLine);
    });
    // Only the tail of stderr matters for error messages; keep it bounded.
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr = (stderr + d).slice(-16_384);
    });
    const onAbort = () => child.kill('SIGKILL');
    signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (err) => {
      signal?.removeEventListener('abort', onAbort);
      reject(err);
    });
    child.on('close', (code) => {
      signal?.removeEventListener('abort', onAbort);
      if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
      if (pendingLine) opts.onStdoutLine?.(pendingLine);
      resolve({ code, stdout, stderr });
    });
  });
}
