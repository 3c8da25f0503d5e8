import { statfs } from 'node:fs/promises';
import type { Db } from '../db/db.js';
import { heardFromSql } from '../cluster/liveness.js';
import { TASK_TYPES } from '@shorts/common/tasks';

/** What the farm looks like in Postgres right now: the same answer from every coordinator. */
export interface FarmState {
  tasks: Array<{ type: string; queued: number; leased: number; waiting: number; oldestQueuedSec: number }>;
  agents: Array<{
    name: string;
    slots: number;
    slotsBusy: number;
    encoder: 'nvenc' | 'x264';
    onnxProvider: 'cuda' | 'cpu';
    faceDetectorProvider: 'cuda' | 'cpu' | 'none';
  }>;
  /** Agents per state: online, draining, and offline ones seen within the last day. */
  agentStates: Array<{ state: 'online' | 'draining' | 'offline'; count: number }>;
  storedBytes: number;
  /** The local object store's volume; absent for S3, whose capacity is not ours to know. */
  volume?: { sizeBytes: number; freeBytes: number };
}

export async function readFarmState(db: Db, opts: { agentSilenceMs: number; localStoreRoot?: string }): Promise<FarmState> {
  const [tasks, agents, agentStates, stored, volume] = await Promise.all([
    db.query<FarmState['tasks'][number]>(
      `SELECT type,
              count(*) FILTER (WHERE state = 'queued')::int AS queued,
              count(*) FILTER (WHERE state = 'leased')::int AS leased,
              count(*) FILTER (WHERE state = 'waiting')::int AS waiting,
              COALESCE(EXTRACT(EPOCH FROM now() - min(queued_at) FILTER (WHERE state = 'queued')), 0)::float8 AS "oldestQueuedSec"
         FROM tasks WHERE state IN ('queued', 'leased', 'waiting') GROUP BY type`,
    ),
    // An agent that re-registered (coordinator restart) has a new row; the newest one per name counts.
    db.query<FarmState['agents'][number]>(
      `SELECT DISTINCT ON (a.name) a.name,
              COALESCE((a.capabilities->>'max_concurrent_tasks')::int, 1) AS slots,
              (SELECT count(*)::int FROM tasks t WHERE t.state = 'leased' AND t.leased_by = a.id) AS "slotsBusy",
              CASE WHEN (a.capabilities->>'nvenc_available')::boolean THEN 'nvenc' ELSE 'x264' END AS encoder,
              CASE WHEN a.capabilities->'onnx_providers' ? 'EXECUTION_PROVIDER_CUDA' THEN 'cuda' ELSE 'cpu' END AS "onnxProvider",
              CASE a.capabilities->>'face_detector_provider' WHEN 'EXECUTION_PROVIDER_CUDA' THEN 'cuda' WHEN 'EXECUTION_PROVIDER_CPU' THEN 'cpu' ELSE 'none' END AS "faceDetectorProvider"
         FROM agents a
        WHERE a.state <> 'offline' AND ${heardFromSql('a', '$1')}
        ORDER BY a.name, a.last_seen_at DESC`,
      [opts.agentSilenceMs],
    ),
    db.query<{ state: 'online' | 'draining' | 'offline'; count: number }>(
      `SELECT s.state, count(a.id)::int AS count
         FROM unnest(ARRAY['online', 'draining', 'offline']) AS s(state)
         LEFT JOIN agents a ON a.state = s.state AND (a.state <> 'offline' OR a.last_seen_at > now() - interval '1 day')
        GROUP BY s.state`,
    ),
    db.one<{ bytes: number }>(`SELECT COALESCE(sum(storage_used_bytes), 0)::int8 AS bytes FROM organizations`),
    opts.localStoreRoot ? statfs(opts.localStoreRoot).catch(() => undefined) : undefined,
  ]);
  // Every task type has its series, at zero when nothing waits.
  const byType = new Map(tasks.map((t) => [t.type, t]));
  for (const type of TASK_TYPES) if (!byType.has(type)) byType.set(type, { type, queued: 0, leased: 0, waiting: 0, oldestQueuedSec: 0 });
  return {
    tasks: [...byType.values()],
    agents,
    agentStates,
    storedBytes: stored?.bytes ?? 0,
    volume: volume ? { sizeBytes: volume.blocks * volume.bsize, freeBytes: volume.bavail * volume.bsize } : undefined,
  };
}
