interface AgentSession {
  id: string;
  name: string;
  taskTypes: string[];
  lastSeen: number;
}

/** The agents this coordinator process has heard from (AgentService's sessions). */
export class AgentRegistry {
  readonly sessions = new Map<string, AgentSession>();
  /** @param leaseTtlMs how long an agent may be silent and still count as connected (../tasks/liveness.ts). */
  constructor(private readonly leaseTtlMs: number) {}

  touch(id: string): AgentSession | undefined {
    const s = this.sessions.get(id);
    if (s) s.lastSeen = Date.now();
    return s;
  }

  /** Agents this process heard from within a lease TTL (three heartbeats). */
  connectedCount(): number {
    const cutoff = Date.now() - this.leaseTtlMs;
    let n = 0;
    for (const s of this.sessions.values()) if (s.lastSeen >= cutoff) n++;
    return n;
  }
}
