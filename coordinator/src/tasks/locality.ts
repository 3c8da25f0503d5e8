// Locality (issue 35): work that reads a job's stored source whole goes, when it can at once, to an
// agent that already holds that source in its object cache (node-agent/src/tasks/object-cache.ts).
//
// The coordinator remembers who holds a source, rather than asking agents what their caches hold: a
// task of a type that reads its job's source whole (its contract's `readsJobSource`) is queued with
// the job as its `locality`, and the agents that hold the job's source are those that ran such a
// task of it: the agent of the part that read the source (`source_read_by`, set at its lease), of
// completed tasks and of parents waiting for their children. Not `leased_by`: a split render's join
// is leased by an agent that reads only the chunks. That needs no change to the agents or the wire,
// and works with any agent version. It is a guess (a cache may have let the source go since, or have
// no room at all), and a wrong guess costs at most the hold below while the guessed agent has a free
// slot, in which case that agent is polling and takes the task itself at once; it never costs a
// download more than without locality.
//
// The hold: the first queued task of a locality (of its type) is not offered to other agents while
// an agent that holds it is connected, has a free slot and could take the task (its type and required
// tags), for at most `localityHoldMs` after the task was queued. An agent with a preferred tag the
// holder lacks (NVENC, for a render: several times faster than the download it saves) is not held
// off: placement by capability comes first. Only the first: a
// job's "render all" or its shorts' reframing are spread over the farm on purpose, and a busy or
// absent holder never makes work wait.

/** SQL: agents that hold task `t`'s source: `agent` read it for a task of its locality (tasks `d`;
 *  tasks leased before `source_read_by` existed name their agent in `leased_by`). A child task's
 *  holder is the agent that read the source for its parent, the one that planned it: that agent read
 *  the source last, and a split render's chunks were cut for it (renders/render-speeds.ts). */
const holdsSql = (t: string, agent: string): string =>
  `(CASE WHEN ${t}.parent_id IS NOT NULL
         THEN EXISTS (SELECT 1 FROM tasks pt WHERE pt.id = ${t}.parent_id AND COALESCE(pt.source_read_by, pt.leased_by) = ${agent})
         ELSE EXISTS (SELECT 1 FROM tasks d WHERE d.locality = ${t}.locality AND d.state IN ('completed', 'waiting')
                        AND COALESCE(d.source_read_by, d.leased_by) = ${agent}) END)`;

/**
 * SQL: task `t` is kept for another agent that holds its source (see above), so agent `me` (a
 * parameter; `meTags` its tags) passes it over. `freeAgents` names a relation of the other connected agents with a free
 * slot (id, task_types, tags); `holdParam` the parameter holding `localityHoldMs`.
 */
export function heldForAnotherSql(o: { t: string; me: string; meTags: string; freeAgents: string; holdParam: string }): string {
  const { t } = o;
  return `(${t}.locality IS NOT NULL
    AND ${t}.queued_at > now() - make_interval(secs => ${o.holdParam} / 1000.0)
    AND NOT ${holdsSql(t, o.me)}
    AND ${t}.id = (SELECT f.id FROM tasks f
                   WHERE f.locality = ${t}.locality AND f.type = ${t}.type AND f.state = 'queued' AND NOT f.cancel_requested
                   ORDER BY f.priority DESC, f.queued_at, f.child_index NULLS FIRST, f.id LIMIT 1)
    AND EXISTS (SELECT 1 FROM ${o.freeAgents} h
                WHERE ${t}.type = ANY(h.task_types) AND h.tags @> ${t}.requires
                  AND NOT EXISTS (SELECT 1 FROM unnest(${t}.prefers) p WHERE p = ANY(${o.meTags}) AND NOT p = ANY(h.tags))
                  AND ${holdsSql(t, 'h.id')}))`;
}

/** SQL: when the hold on task `t` (if it has a locality) ends, or NULL: the moment an agent passed
 *  over for it looks again, as no NOTIFY marks that moment. */
export const holdEndsSql = (t: string, holdParam: string): string =>
  `CASE WHEN ${t}.locality IS NOT NULL AND ${t}.queued_at > now() - make_interval(secs => ${holdParam} / 1000.0)
        THEN ${t}.queued_at + make_interval(secs => ${holdParam} / 1000.0) END`;
