import type { AgentConfig } from '../config.js';
import { TaskError, type TaskHandler } from './task-context.js';

export async function analyzePrerequisites(_config: AgentConfig): Promise<string | undefined> {
  return undefined;
}

export const analyzeVideo: TaskHandler = {
  async run() {
    throw new TaskError('analyze-video is being built', 'UNSUPPORTED');
  },
};
