import path from 'node:path';
import { TaskError, type TaskHandler } from './task-context.js';
import { stageProgress } from '@shorts/common/tasks/contract';
import { PROBE_MEDIA_STAGES } from '@shorts/common/tasks/probe-media';
import { downloadSource } from './download.js';
import { probeFile, type FfprobeJson } from '@shorts/common/media/ffprobe';

/** Stops a probe's download once the index is read. */
class IndexRead extends Error {}

/** ffprobe a URL: downloads it under the fetch guard (an MP4 only up to its index), then probes the local file only. */
export const probeMedia: TaskHandler<'probe-media'> = {
  async run(ctx) {
    const { url } = ctx.payload;
    ctx.progress(stageProgress(PROBE_MEDIA_STAGES, 'downloading'), 'downloading');
    const local = path.join(ctx.workDir, 'input');
    let info: FfprobeJson | undefined;
    // An MP4's index says all a probe prints: once it has arrived (head, or tail first where the file
    // keeps it at the end) the rest is not fetched.
    const indexOnly = async (partial: string) => {
      info = await probeFile(partial, { ffprobePath: ctx.config.ffprobePath, signal: ctx.signal }).catch(() => undefined);
      if (info) throw new IndexRead();
    };
    try {
      await downloadSource(ctx, url, local, 2_000_000_000, 'the file', indexOnly);
    } catch (err) {
      if (!(err instanceof IndexRead)) throw err;
    }
    ctx.progress(stageProgress(PROBE_MEDIA_STAGES, 'probing'), 'probing');
    try {
      info ??= await probeFile(local, { ffprobePath: ctx.config.ffprobePath, signal: ctx.signal });
    } catch {
      throw new TaskError('The file is not a media file ffprobe can read', 'NOT_MEDIA');
    }
    return {
      formatName: info.format?.format_name ?? 'unknown',
      durationSec: Number(info.format?.duration ?? 0),
      streams: (info.streams ?? []).map((s) => ({
        // A stream of a codec ffprobe does not know has no name; such a result fails the contract's check.
        index: s.index,
        codecType: s.codec_type,
        codecName: s.codec_name as string,
        ...(s.width ? { width: s.width, height: s.height } : {}),
      })),
    };
  },
};
