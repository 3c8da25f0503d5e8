import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';

/** A TCP port nothing listens on right now (the kernel's pick, released again). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

/** Whether something can bind the port (nothing holds it). */
export async function portIsFree(port: number): Promise<boolean> {
  const server = net.createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Whether a process runs (a zombie nobody reaped yet counts as gone). Linux /proc. */
export function processAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Resolves once none of the pids runs; rejects after timeoutMs naming those still running. */
export async function waitForExit(pids: number[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const alive = pids.filter(processAlive);
    if (!alive.length) return;
    if (Date.now() > deadline) throw new Error(`still running after ${timeoutMs} ms: ${alive.join(', ')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The live processes whose environment holds `name=value` (what a launcher passed down to all it
 *  started). Linux /proc; processes whose environment cannot be read are not listed. */
export function processesWithEnv(name: string, value: string): number[] {
  const wanted = `${name}=${value}`;
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(wanted) && processAlive(pid);
      } catch {
        return false;
      }
    });
}
