// An agent is trusted with its own task and nothing more: the object keys it reports must lie under
// that task's prefix (where its signed upload URLs point), each may name one thing only, and every
// size is read from the store, never taken from the agent's word.
import { AppError } from '../errors.js';
import type { TaskType } from '@shorts/common/tasks';
import { TASK_CONTRACTS } from '@shorts/common/tasks/contracts';
import type { Db } from '../db/db.js';
import { childrenOf } from '../tasks/task-lookups.js';
import { deletePrefix, type ObjectStore } from '../storage/object-store.js';
import { taskObjectPrefix, type TaskRow } from '../tasks/task-queue.js';

const refused = (message: string) => new AppError(422, 'bad_result', message);

/** Whether a task of this type writes an object of this name (upload URLs are signed for no other):
 *  the names each type writes are its contract's `outputs` (common/src/tasks/<type>.ts). */
export function taskWritesName(type: TaskType, name: string): boolean {
  return TASK_CONTRACTS[type].outputs.pattern.test(name);
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

/** Deletes what a task's children wrote, each under its own task's prefix: called once the parent
 *  has finished, when its result has taken what it keeps (a failed one keeps nothing). */
export async function deleteChildrenObjects(app: { db: Db; store: ObjectStore }, parent: Pick<TaskRow, 'id'>): Promise<void> {
  const children = await childrenOf(app.db.pool, parent.id);
  for (const child of children) await deletePrefix(app.store, taskObjectPrefix(child));
}
