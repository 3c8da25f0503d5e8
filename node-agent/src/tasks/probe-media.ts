import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { TaskError, type TaskContext, type TaskHandler } from './task-context.js';
import { downloadSource } from './download.js';
import { inputGuard } from '../../../common/src/media/input-guard.js';

const run = promisify(execFile);

/** ffprobe a URL: downloads it under the fetch guard, then probes the local file only. */
export const probeMedia: TaskHandler = {
  async run(ctx: TaskContext) {
    const url = String(ctx.payload.url ?? '');
    ctx.progress(0.1, 'downloading');
    const local = path.join(ctx.workDir, 'input');
    await downloadSource(ctx, url, local, 2_000_000_000);
    ctx.progress(0.8, 'probing');
    let out: string;
    try {
      ({ stdout: out } = await run(ctx.config.ffprobePath, ['-v', 'error', ...inputGuard(), '-print_format', 'json', '-show_format', '-show_streams', local], { signal: ctx.signal }));
    } catch {
      throw new TaskError('The file is not a media file ffprobe can read', 'NOT_MEDIA');
    }
    const info = JSON.parse(out);
    return {
      formatName: info.format?.format_name ?? 'unknown',
      durationSec: Number(info.format?.duration ?? 0),
      streams: (info.streams ?? []).map((s: any) => ({
        index: s.index, codecType: s.codec_type, codecName: s.codec_name,
        ...(s.width ? { width: s.width, height: s.height } : {}),
      })),
    };
  },
};
