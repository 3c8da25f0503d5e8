// One structured JSON logger for every process: one line per event on stdout/stderr. Its level comes
// from the process's configuration (LOG_LEVEL is read there with the rest), not from the environment.
import { AsyncLocalStorage } from 'node:async_hooks';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

function serialise(value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  return value;
}

// Fields every line logged inside withLogFields carries (a request's or a task's requestId), whichever
// logger or child writes it, without threading a logger through every call.
const scoped = new AsyncLocalStorage<Record<string, unknown>>();

/** Runs fn with `fields` on every log line written while it (and what it starts) runs. */
export function withLogFields<T>(fields: Record<string, unknown>, fn: () => T): T {
  return scoped.run({ ...scoped.getStore(), ...fields }, fn);
}

/** The fields withLogFields put in scope here (a request's requestId), if any. */
export function logFields(): Record<string, unknown> | undefined {
  return scoped.getStore();
}

export function createLogger(base: Record<string, unknown> = {}, level: LogLevel = 'info'): Logger {
  const threshold = LEVELS[level] ?? LEVELS.info;
  const write = (lvl: Exclude<LogLevel, 'silent'>, msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[lvl] < threshold) return;
    const record: Record<string, unknown> = { time: new Date().toISOString(), level: lvl, msg, ...scoped.getStore(), ...base };
    if (fields) for (const [k, v] of Object.entries(fields)) record[k] = serialise(v);
    const line = JSON.stringify(record) + '\n';
    (lvl === 'error' || lvl === 'warn' ? process.stderr : process.stdout).write(line);
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (fields) => createLogger({ ...base, ...fields }, level),
  };
}
