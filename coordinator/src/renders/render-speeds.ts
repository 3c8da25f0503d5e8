// How fast each agent renders, for cutting a split render's chunks (issue 35): a chunk on a slower
// host gets less of the video, so that the chunks end together and the render waits for none. A
// farm's hosts differ (CPU generations, a host also running Postgres, a noisy neighbour), and the
// render waits for its slowest chunk: 35 % slower on one of two hosts costs a split render 15 %.
//
// Measured, not declared: each render-chunk result says at how many frames a second its video
// encoded (`encodeFps`, the sound not counted); an agent's speed is the median of its last chunks',
// in output pixels a second (the renders' sizes differ), for the one encoder asked.
import type { Db } from '../db/db.js';
import { chunkPaceByAgent } from '../tasks/task-lookups.js';
import type { RenderEncoder } from '@shorts/common/tasks/render-short';

/** An agent's speed is the median of this many of its latest chunks, finished within a day... */
const RECENT_CHUNKS = 5;
/** ...and is known once it has this many: one chunk's pace says as much about its neighbours on the
 *  host as about the host. */
const MIN_CHUNKS = 3;
/** Speeds closer than this (a ratio) cut as alike: within what one host's chunks vary by. Every cut
 *  moved off the even split is a chunk start the encoder meets without the frames before it. */
const ALIKE_WITHIN = 1.1;

/** Each of these agents' measured speed with `encoder`, output pixels a second; absent when unmeasured. */
export function renderSpeeds(db: Db, agentIds: readonly string[], encoder: RenderEncoder): Promise<Map<string, number>> {
  return chunkPaceByAgent(db, agentIds, encoder, { recent: RECENT_CHUNKS, atLeast: MIN_CHUNKS });
}

/**
 * The relative speed of each of a split's `chunks`: the first chunk's is the splitting agent's own
 * (the first chunk is held for it: coordinator/src/tasks/locality.ts), the others' the mean of the
 * other free slots' agents (which of them takes which chunk is not known). An agent not measured
 * yet counts as the median of those that were. Undefined (all alike) when the splitter or none of
 * the others was measured, when there are no others, or when the two are within ALIKE_WITHIN.
 */
export function chunkSpeeds(
  splitter: string,
  free: ReadonlyArray<{ id: string; slots: number }>,
  chunks: number,
  measured: ReadonlyMap<string, number>,
): number[] | undefined {
  const own = measured.get(splitter);
  // The splitter's own further slots take chunks too.
  const others = free.flatMap((a) => Array<string>(a.id === splitter ? a.slots - 1 : a.slots).fill(a.id));
  const known = others.map((id) => measured.get(id)).filter((v): v is number => v !== undefined);
  if (own === undefined || !known.length) return undefined;
  const sorted = [...measured.values()].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  const mean = others.reduce((sum, id) => sum + (measured.get(id) ?? median), 0) / others.length;
  const ratio = mean / own;
  if (ratio < ALIKE_WITHIN && ratio > 1 / ALIKE_WITHIN) return undefined;
  return [1, ...Array<number>(chunks - 1).fill(ratio)].map((v) => Number(v.toFixed(3)));
}
