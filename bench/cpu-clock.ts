// The farm benches' load-proof clock (issue 22). Each agent is pinned to a core of its own, so on
// an idle machine each lease takes as long as its agent's CPU time over it (the agent and the
// ffmpeg/pocketsphinx it runs). The samples give each lease its CPU time, the job's task events its
// leases, and the job's critical path over them its time on idle cores (idleCoreSeconds).
import { existsSync, readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SEC = 100;

interface ProcStat {
  pid: number;
  ppid: number;
  /** utime + stime + cutime + cstime: its own CPU and that of the children it has reaped. */
  ticks: number;
}

function readStat(pid: number): ProcStat | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command may hold spaces and parentheses: fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { pid, ppid: Number(fields[1]), ticks: [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0) };
  } catch {
    // It exited while we looked: its time is in its parent's reaped total from now on.
    return undefined;
  }
}

/** Whether the kernel lists each thread's children (CONFIG_PROC_CHILDREN). */
const KERNEL_CHILD_LISTS = existsSync(`/proc/${process.pid}/task/${process.pid}/children`);

/** Each process's children: from the kernel's child lists where it keeps them (a few files a
 *  sample, so that the sampler, in the coordinator's process, takes little from the agents' cores;
 *  Node and ffmpeg spawn from their main thread), else from one scan of all of /proc. */
function childLister(): (pid: number) => number[] {
  if (KERNEL_CHILD_LISTS)
    return (pid) => {
      try {
        return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
      } catch {
        return []; // it exited while we looked
      }
    };
  const byParent = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    const p = /^\d+$/.test(name) ? readStat(Number(name)) : undefined;
    if (p) byParent.set(p.ppid, [...(byParent.get(p.ppid) ?? []), p.pid]);
  }
  return (pid) => byParent.get(pid) ?? [];
}

/** CPU seconds of each root's process tree so far (live descendants, and what they have reaped). */
export function treeCpuSeconds(roots: number[]): number[] {
  const childrenOf = childLister();
  return roots.map((root) => {
    let ticks = 0;
    const stack = [root];
    while (stack.length) {
      const stat = readStat(stack.pop()!);
      if (!stat) continue;
      ticks += stat.ticks;
      stack.push(...childrenOf(stat.pid));
    }
    return ticks / TICKS_PER_SEC;
  });
}

/** Each agent's CPU seconds over time, sampled every `intervalMs` until stopped. */
export interface CpuSampler {
  stop(): void;
  /** Agent `i`'s CPU seconds at wall time `ms` (Date.now()), read off the samples. */
  cpuAt(i: number, ms: number): number;
  /** Agent `i`'s CPU seconds from start to stop. */
  total(i: number): number;
}

export function startCpuSampler(agentPids: number[], intervalMs = 200): CpuSampler {
  const samples: Array<{ ms: number; sec: number[] }> = [];
  const sample = () => {
    const now = treeCpuSeconds(agentPids);
    const prev = samples.at(-1)?.sec;
    // A tree's total can dip for a moment when a child exits before its parent has reaped it.
    samples.push({ ms: Date.now(), sec: prev ? now.map((x, i) => Math.max(x, prev[i]!)) : now });
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
    },
    cpuAt(i, ms) {
      const after = samples.findIndex((x) => x.ms >= ms);
      if (after <= 0) return samples[after === 0 ? 0 : samples.length - 1]!.sec[i]!;
      const [a, b] = [samples[after - 1]!, samples[after]!];
      return a.sec[i]! + ((b.sec[i]! - a.sec[i]!) * (ms - a.ms)) / Math.max(1, b.ms - a.ms);
    },
    total(i) {
      return samples.at(-1)!.sec[i]! - samples[0]!.sec[i]!;
    },
  };
}

/** One lease of one of the job's tasks: from its `leased` event to the task's next event. */
export interface LeaseSpan {
  taskId: string;
  type: string;
  parentId: string | null;
  agent: string;
  startMs: number;
  endMs: number;
}

/**
 * The job's time on idle cores, each agent alone on its own: its critical path, with each lease
 * costing the CPU time its agent spent during it (an agent runs one task at a time here). A task
 * without children is its leases, one after the other. A task that fans out is its own leases (the
 * split, the final part, the join) plus, for each round of children (one child type a round: a long
 * analysis's ranges, then its shorts), the busiest agent's share of that round (each agent's
 * children one after the other, the agents side by side). Other work on the machine
 * slows the wall clock but not this one. It leaves out what no agent spends CPU on (the coordinator,
 * waiting for the disk), which an idle machine makes short: a lower bound.
 */
export function idleCoreSeconds(spans: LeaseSpan[], agents: string[], sampler: CpuSampler): number {
  const cpu = (s: LeaseSpan) => {
    const i = agents.indexOf(s.agent);
    if (i < 0) throw new Error(`a lease by ${s.agent}, which is not measured`);
    return sampler.cpuAt(i, s.endMs) - sampler.cpuAt(i, s.startMs);
  };
  const roots = spans.filter((s) => !s.parentId);
  const children = spans.filter((s) => s.parentId);
  if (!children.length) return roots.reduce((sum, s) => sum + cpu(s), 0);
  const rounds = new Map<string, Map<string, number>>();
  for (const s of children) {
    const byAgent = rounds.get(s.type) ?? new Map<string, number>();
    byAgent.set(s.agent, (byAgent.get(s.agent) ?? 0) + cpu(s));
    rounds.set(s.type, byAgent);
  }
  const own = roots.reduce((sum, s) => sum + cpu(s), 0);
  return own + [...rounds.values()].reduce((sum, byAgent) => sum + Math.max(...byAgent.values()), 0);
}

/** The leases of a subject's (a job's or a render's) tasks, from task_events. */
export async function leaseSpans(db: { query<T>(sql: string, params?: unknown[]): Promise<T[]> }, subjectId: string): Promise<LeaseSpan[]> {
  const events = await db.query<{ taskId: string; type: string; parentId: string | null; kind: string; ms: number; agent: string | null }>(
    `SELECT e.task_id AS "taskId", t.type, t.parent_id AS "parentId", e.kind, (EXTRACT(EPOCH FROM e.created_at) * 1000)::float8 AS ms, a.name AS agent
       FROM task_events e JOIN tasks t ON t.id = e.task_id LEFT JOIN agents a ON a.id = e.agent_id
      WHERE t.subject_id = $1 ORDER BY e.id`,
    [subjectId],
  );
  const spans: LeaseSpan[] = [];
  events.forEach((e, i) => {
    if (e.kind !== 'leased' || !e.agent) return;
    const end = events.slice(i + 1).find((x) => x.taskId === e.taskId);
    if (!end) throw new Error(`task ${e.taskId} leased and never heard of again`);
    spans.push({ taskId: e.taskId, type: e.type, parentId: e.parentId, agent: e.agent, startMs: e.ms, endMs: end.ms });
  });
  return spans;
}
