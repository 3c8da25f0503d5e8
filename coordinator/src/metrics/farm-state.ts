import { statfs } from 'node:fs/promises';
import type { Db } from '../db/db.js';
import { busySlotsByAgent, heardFromSql } from '../tasks/liveness.js';
import { queueDepthByType, type QueueDepth } from '../tasks/operator.js';
import { TASK_TYPES } from '@shorts/common/tasks';

/** What the farm looks like in Postgres right now: the same answer from every coordinator. */
export interface FarmState {
  tasks: QueueDepth[];
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
    queueDepthByType(db),
    // An agent that re-registered (coordinator restart) has a new row; the newest one per name counts.
    db.query<Omit<FarmState['agents'][number], 'slotsBusy'> & { id: string }>(
      `SELECT DISTINCT ON (a.name) a.id, a.name,
              COALESCE((a.capabilities->>'max_concurrent_tasks')::int, 1) AS slots,
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
  const busy = await busySlotsByAgent(
    db,
    agents.map((a) => a.id),
  );
  // Every task type has its series, at zero when nothing waits.
  const byType = new Map(tasks.map((t) => [t.type, t]));
  for (const type of TASK_TYPES) if (!byType.has(type)) byType.set(type, { type, queued: 0, leased: 0, waiting: 0, oldestQueuedSec: 0 });
  return {
    tasks: [...byType.values()],
    agents: agents.map(({ id, name, slots, ...rest }) => ({ name, slots, slotsBusy: busy.get(id) ?? 0, ...rest })),
    agentStates,
    storedBytes: stored?.bytes ?? 0,
    volume: volume ? { sizeBytes: volume.blocks * volume.bsize, freeBytes: volume.bavail * volume.bsize } : undefined,
  };
}
