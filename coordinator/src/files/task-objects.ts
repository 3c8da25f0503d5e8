// An agent is trusted with its own task and nothing more: the object keys it reports must lie under
// that task's prefix (where its signed upload URLs point), each may name one thing only, and every
// size is read from the store, never taken from the agent's word.
import { AppError } from '../errors.js';
import type { TaskType } from '@shorts/common/tasks';
import type { ObjectStore } from '../storage/object-store.js';
import { taskObjectPrefix, type TaskRow } from '../tasks/task-queue.js';

const refused = (message: string) => new AppError(422, 'bad_result', message);

// The names each task type writes (node-agent/src/tasks/). `/objects/` serves a key with the content
// type of its extension, so an agent free to name `x.svg` or `x.html` would have a page of its own
// served from this origin.
const THUMBNAIL = '\\.(jpg|png)';
// A source keeps its container's extension (containerType in node-agent/src/media/ffmpeg.ts).
const SOURCE = '\\.(mp4|webm|mkv|avi|flv|ts|mpg|ogv|asf|mxf|nut|bin)';
const EXPECTED_NAMES: Record<TaskType, RegExp> = {
  // analysis-audio.wav: a long source's 16 kHz audio, which its ranges read (issue 22).
  'analyze-video': new RegExp(`^(source${SOURCE}|source-thumb${THUMBNAIL}|analysis-audio\\.wav|short-\\d+\\.mp4|short-\\d+${THUMBNAIL})$`),
  // .ass: the caption script the render burned in, kept so a client can read the words back.
  'render-short': new RegExp(`^render[A-Za-z0-9_-]*(\\.mp4|\\.ass|${THUMBNAIL})$`),
  'render-chunk': /^chunk-\d+\.mp4$/,
  'probe-media': /^$/,
  // A range reports words only.
  'analyze-range': /^$/,
};

/** Whether a task of this type writes an object of this name (upload URLs are signed for no other). */
export function taskWritesName(type: TaskType, name: string): boolean {
  return EXPECTED_NAMES[type].test(name);
}

/**
 * Checks every reported key (nulls skipped) and returns the stored size of each, by key. Throws an
 * AppError (which fails the task with its message) for a foreign, repeated, unexpected or missing object.
 */
export async function verifyTaskObjects(
  store: Pick<ObjectStore, 'stat'>,
  task: Pick<TaskRow, 'id' | 'organizationId' | 'type'>,
  keys: Array<string | null | undefined>,
): Promise<Map<string, number>> {
  const prefix = taskObjectPrefix(task);
  const sizes = new Map<string, number>();
  for (const key of keys) {
    if (key === null || key === undefined) continue;
    if (typeof key !== 'string' || !key.startsWith(prefix) || key.slice(prefix.length).includes('/') || key.includes('..')) {
      throw refused(`the agent reported an object outside its task (${String(key).slice(0, 200)})`);
    }
    const name = key.slice(prefix.length);
    if (!taskWritesName(task.type, name)) {
      throw refused(`the agent reported an object that ${task.type} does not write (${name.slice(0, 100)})`);
    }
    if (sizes.has(key)) throw refused(`the agent reported the object ${key} twice`);
    const info = await store.stat(key);
    if (!info) throw refused(`the agent reported an object it never uploaded (${key})`);
    sizes.set(key, info.size);
  }
  return sizes;
}
