import { addDays, dayOfWeek, wallTimeAt, zonedToEpoch } from './zoned-time.js';

export interface QueueSlot {
  dayOfWeek: number;
  time: string;
}

export interface SlotQuery {
  slots: QueueSlot[];
  maxPostsPerSlot: number;
  timeZone: string;
  now: number;
  /** Instants (ms) of posts already holding a place in the queue. */
  taken: number[];
  count: number;
  /** How far ahead to look before giving up, in days. */
  horizonDays?: number;
}

/**
 * The next free queue slots after `now`. A slot is a weekly wall-clock time in the zone, so it
 * stays at 09:00 local across daylight-saving changes; a slot inside a spring-forward gap moves
 * forward by the gap (02:30 becomes 03:30), and one in a fall-back overlap takes the first 01:30.
 * A slot is full once `maxPostsPerSlot` posts sit at exactly its instant.
 */
export function nextFreeSlots(q: SlotQuery): number[] {
  if (!q.slots.length || q.count < 1) return [];
  const used = new Map<number, number>();
  for (const t of q.taken) used.set(t, (used.get(t) ?? 0) + 1);

  const today = wallTimeAt(q.now, q.timeZone);
  const found: number[] = [];
  const seen = new Set<number>();
  const horizon = q.horizonDays ?? 400;
  for (let i = 0; i <= horizon && found.length < q.count; i++) {
    const date = addDays(today, i);
    const weekday = dayOfWeek(date);
    const instants = q.slots
      .filter((s) => s.dayOfWeek === weekday)
      .map((s) => {
        const [hour, minute] = s.time.split(':').map(Number) as [number, number];
        return zonedToEpoch({ ...date, hour, minute }, q.timeZone);
      })
      .sort((a, b) => a - b);
    for (const at of instants) {
      // Two slots can name one instant (duplicates, or 02:30 pushed onto 03:30): one capacity.
      if (at <= q.now || seen.has(at)) continue;
      seen.add(at);
      if ((used.get(at) ?? 0) >= q.maxPostsPerSlot) continue;
      found.push(at);
      if (found.length >= q.count) break;
    }
  }
  return found;
}
