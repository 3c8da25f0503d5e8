// The admin CLI (coordinator/src/cli/admin.ts) as an operator runs it, against a test cluster's
// database and data folder.
import { execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '@shorts/common/paths';

const run = promisify(execFile);

/** What the CLI needs to know of a cluster: its database and its data folder. */
export interface AdminTarget {
  databaseUrl: string;
  dataDir: string;
}

/** The node arguments that start the CLI with `args`. */
export const adminArgv = (args: string[]): string[] => ['--import', 'tsx', path.join(repoRoot(), 'coordinator/src/cli/admin.ts'), ...args];

/** The CLI's environment: this one, pointed at the target, its log quiet (warnings only), `extra` on top. */
export const adminEnv = (target: AdminTarget, extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  DATABASE_URL: target.databaseUrl,
  DATA_DIR: target.dataDir,
  LOG_LEVEL: 'warn',
  ...extra,
});

/** Runs the CLI to its end and gives its stdout; on a non-zero exit it rejects with execFile's error (code, stdout, stderr). */
export async function admin(target: AdminTarget, args: string[], extraEnv: Record<string, string> = {}): Promise<string> {
  const { stdout } = await run(process.execPath, adminArgv(args), { env: adminEnv(target, extraEnv) });
  return stdout;
}

/** Runs the CLI with `args` (which ask for --json) and parses what it printed. */
export async function adminJson<T>(target: AdminTarget, args: string[]): Promise<T> {
  return JSON.parse(await admin(target, args)) as T;
}

/** Runs the CLI with `stdin` piped to it; resolves with its exit code and output, whatever the code. */
export function adminWithStdin(
  target: AdminTarget,
  args: string[],
  stdin = '',
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, adminArgv(args), { env: adminEnv(target), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}
