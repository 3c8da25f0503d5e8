import { TaskError, type TaskHandler } from './task-context.js';

export const renderShort: TaskHandler = {
  async run() {
    throw new TaskError('render-short is being built', 'UNSUPPORTED');
  },
};
