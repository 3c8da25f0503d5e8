import type { Db } from '../db/db.js';
import type { CancelOutcome } from './queue-core.js';

/**
 * Cancels the work of a job or render (its tasks' subject): each top-level task not yet finished.
 * A queued or waiting one ends at once (its children with it), and its domain hears it as failed
 * with code CANCELLED; a leased one is asked to stop, which its agent learns on its next progress
 * report (about every half second while its progress moves, and at least every heartbeat, a third
 * of LEASE_TTL_MS: 10 s by default), and it then stops its child processes and fails the task as
 * cancelled. An agent that goes silent instead is finished as cancelled by the lease watchdog.
 * Either way the job or render reads `Cancelled`, as after an operator's cancel (docs/api.md).
 * Says whether anything was still there to cancel.
 */
export async function cancelSubjectTasks(
  db: Db,
  queue: { cancel(id: string, reason?: string): Promise<CancelOutcome> },
  subjectId: string,
): Promise<'ended' | 'stopping' | 'nothing'> {
  const roots = await db.query<{ id: string }>(
    `SELECT id FROM tasks WHERE subject_id = $1 AND parent_id IS NULL AND state IN ('queued', 'waiting', 'leased') ORDER BY created_at`,
    [subjectId],
  );
  const outcomes = await Promise.all(roots.map((r) => queue.cancel(r.id)));
  if (outcomes.includes('cancel_requested')) return 'stopping';
  return outcomes.includes('cancelled') ? 'ended' : 'nothing';
}
