import { access } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { toolEnv } from '@shorts/common/media/tools';
import { promisify } from 'node:util';
import type { TaskType } from '@shorts/common/tasks';
import type { HostNeed } from '@shorts/common/tasks/contract';
import { TASK_CONTRACTS } from '@shorts/common/tasks/contracts';
import type { AgentConfig } from '../config.js';
import type { TaskHandler } from './task-context.js';
import { probeMedia } from './probe-media.js';
import { analyzeVideo, analyzePrerequisites } from './analyze-video.js';
import { renderShort } from './render-short.js';
import { renderChunk } from './render-chunk.js';
import { analyzeRange } from './analyze-range.js';
import { reframeShort } from './reframe-short.js';

/** One handler per task type; the compiler checks none is missing. */
export const TASK_HANDLERS: { [T in TaskType]: TaskHandler<T> } = {
  'probe-media': probeMedia,
  'analyze-video': analyzeVideo,
  'analyze-range': analyzeRange,
  'reframe-short': reframeShort,
  'render-short': renderShort,
  'render-chunk': renderChunk,
};

const run = promisify(execFile);

/** How this host checks each need a task type's contract names; a message when it is missing. */
const NEED_CHECKS: Record<HostNeed, (config: AgentConfig) => Promise<string | undefined>> = {
  async ffmpeg(config) {
    try {
      await access(config.ffmpegPath);
      await run(config.ffprobePath, ['-version'], { env: toolEnv() });
      return undefined;
    } catch {
      return `ffmpeg/ffprobe not runnable (${config.ffmpegPath}, ${config.ffprobePath})`;
    }
  },
  'speech-recognition': analyzePrerequisites,
  // The detector is loaded once by the agent at start (Agent.loadFaceDetector), which disables every
  // type that needs it when it cannot be loaded.
  'face-detector': async () => undefined,
};

// Each need is checked once per config: analyze-video and analyze-range both need speech
// recognition, whose deep check runs the recogniser.
const checked = new WeakMap<AgentConfig, Map<HostNeed, Promise<string | undefined>>>();

/** Whether a task type needs the reframing face detector (its contract's `needs`). */
export const needsFaceDetector = (type: TaskType): boolean => TASK_CONTRACTS[type].needs.some((need) => need === 'face-detector');

/** What a task type needs on this host; a message when something is missing, else undefined. */
export async function checkTaskPrerequisites(type: TaskType, config: AgentConfig): Promise<string | undefined> {
  const known = checked.get(config) ?? new Map<HostNeed, Promise<string | undefined>>();
  checked.set(config, known);
  for (const need of TASK_CONTRACTS[type].needs) {
    if (!known.has(need)) known.set(need, NEED_CHECKS[need](config));
    const missing = await known.get(need)!;
    if (missing) return missing;
  }
  return undefined;
}
