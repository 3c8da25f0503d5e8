import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';

// Compose's variable interpolation (compose-spec "Interpolation"), for reading deploy/compose.yaml as
// `docker compose --env-file …` would where no compose CLI is installed: `$$`, `$VAR`, `${VAR}`,
// `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}`, `${VAR?error}`, `${VAR:+alt}`, `${VAR+alt}`.

const PATTERN = /\$(?:(\$)|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g;

export function interpolate(value: string, env: Record<string, string | undefined>, where: string): string {
  return value.replace(PATTERN, (_m, dollar?: string, name?: string, op?: string, arg = '', bare?: string) => {
    if (dollar) return '$';
    if (bare) return env[bare] ?? '';
    const v = env[name!];
    const unset = v === undefined;
    const empty = unset || v === '';
    switch (op) {
      case undefined:
        return v ?? '';
      case ':-':
        return empty ? arg : v!;
      case '-':
        return unset ? arg : v!;
      case ':+':
        return empty ? '' : arg;
      case '+':
        return unset ? '' : arg;
      default:
        if (op === ':?' ? empty : unset) throw new Error(`${where}: required variable ${name} is missing a value: ${arg}`);
        return v!;
    }
  });
}

/** Every string in the document interpolated; keys stay as they are. */
export function interpolateAll<T>(doc: T, env: Record<string, string | undefined>, where = ''): T {
  if (typeof doc === 'string') return interpolate(doc, env, where) as T;
  if (Array.isArray(doc)) return doc.map((v, i) => interpolateAll(v, env, `${where}[${i}]`)) as T;
  if (doc && typeof doc === 'object') {
    return Object.fromEntries(Object.entries(doc).map(([k, v]) => [k, interpolateAll(v, env, where ? `${where}.${k}` : k)])) as T;
  }
  return doc;
}

/** KEY=VALUE lines of an env file (compose's format: # comments, no export, no quotes here). */
export function readEnvFile(file: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = line.match(/^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/);
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

const run = promisify(execFile);

/**
 * The compose CLI on this machine: `docker compose` (v2), else the older `docker-compose` (1.x, which
 * rejects the top-level `name` of the compose spec, so callers leave it out for that one); null when
 * neither runs. `config` needs neither a Docker engine nor the network.
 */
export async function composeCli(): Promise<{ command: string; args: string[]; legacy: boolean } | null> {
  for (const [command, args, legacy] of [
    ['docker', ['compose'], false],
    ['docker-compose', [], true],
  ] as const) {
    try {
      await run(command, [...args, 'version'], { timeout: 20_000 });
      return { command, args: [...args], legacy };
    } catch {
      /* not installed */
    }
  }
  return null;
}
