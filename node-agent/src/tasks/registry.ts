import { access } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { TaskType } from '../../../common/src/tasks.js';
import type { AgentConfig } from '../config.js';
import type { TaskHandler } from './task-context.js';
import { probeMedia } from './probe-media.js';
import { analyzeVideo, analyzePrerequisites } from './analyze-video.js';
import { renderShort } from './render-short.js';

/** One handler per task type; the compiler checks none is missing. */
export const TASK_HANDLERS: Record<TaskType, TaskHandler> = {
  'probe-media': probeMedia,
  'analyze-video': analyzeVideo,
  'render-short': renderShort,
};

const run = promisify(execFile);

/** What a task type needs on this host; a message when something is missing, else undefined. */
export async function checkTaskPrerequisites(type: TaskType, config: AgentConfig): Promise<string | undefined> {
  try {
    await access(config.ffmpegPath);
    await run(config.ffprobePath, ['-version']);
  } catch {
    return `ffmpeg/ffprobe not runnable (${config.ffmpegPath}, ${config.ffprobePath})`;
  }
  if (type === 'analyze-video') return analyzePrerequisites(config);
  return undefined;
}
