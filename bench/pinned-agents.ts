// Two agents, each pinned to a core of its own, the second one drainable: the farm benches
// (farm-chunked.ts, farm-shorts.ts) time one agent against two on the same farm.
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { waitFor, type AgentProcess, type TestCluster } from '../test/helpers/cluster.js';
import { setDraining } from '../coordinator/src/cluster/agents.js';

/** Pins the agent (and what it starts from now on) to one core. */
export function pin(agent: AgentProcess, core: number): void {
  execFileSync('taskset', ['-a', '-cp', String(core), String(agent.proc.pid)], { stdio: 'ignore' });
}

/**
 * Starts two agents with `env`, the first on core 0 and the second on core 1 (or 0 on a one-core
 * machine). `drainSecond(true)` leaves the farm one agent (the second takes no lease, so no slot of
 * it is free); `drainSecond(false)` gives it back. Each returns once the second agent has said so
 * (on its next heartbeat), so the round after it runs on the farm asked for.
 */
export async function startPinnedPair(
  cluster: TestCluster,
  env: Record<string, string>,
): Promise<{ first: AgentProcess; second: AgentProcess; drainSecond: (draining: boolean) => Promise<void> }> {
  const first = await cluster.startAgent(env);
  pin(first, 0);
  const second = await cluster.startAgent(env);
  pin(second, 1 % os.cpus().length);
  const secondId = await waitFor(
    async () => (await cluster.app.db.one<{ id: string }>(`SELECT id FROM agents WHERE name = $1`, [second.name]))?.id,
    60_000,
    'the second agent registered',
  );
  // An agent says so only when its state changes: asking for the state it is in waits for nothing.
  let drained = false;
  const drainSecond = async (draining: boolean) => {
    if (draining === drained) return;
    drained = draining;
    const said = draining ? /taking no new work/ : /drain lifted/;
    const times = () => second.logs.filter((l) => said.test(l)).length;
    const before = times();
    await setDraining(cluster.app.db, secondId, draining);
    await waitFor(async () => (times() > before ? true : undefined), 60_000, `the second agent to say ${said}`);
  };
  return { first, second, drainSecond };
}
