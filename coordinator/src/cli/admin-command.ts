import { parseArgs } from 'node:util';
import { AppError } from '../errors.js';
import type { Db } from '../db/db.js';

/** The CLI's arguments: every command reads its options from the same set. */
export function parseAdminArgs(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      name: { type: 'string' },
      plan: { type: 'string' },
      credits: { type: 'string' },
      'retention-days': { type: 'string' },
      'phone-verification': { type: 'string' },
      email: { type: 'string' },
      org: { type: 'string' },
      role: { type: 'string' },
      phone: { type: 'string' },
      'phone-verified': { type: 'boolean' },
      user: { type: 'string' },
      ttl: { type: 'string' },
      password: { type: 'string' },
      all: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

/** What one command (`org create`, `agent list`, …) gets: the migrated database and its arguments. */
export interface AdminCommandInput {
  db: Db;
  values: ReturnType<typeof parseAdminArgs>['values'];
  /** The positional after the command's two words (an id). */
  arg: string | undefined;
  json: boolean;
}

export type AdminCommand = (input: AdminCommandInput) => Promise<void>;

export function print(value: unknown, json: boolean): void {
  if (json) {
    process.stdout.write(JSON.stringify(value, null, 2) + '\n');
    return;
  }
  const rows = Array.isArray(value) ? value : [value];
  for (const row of rows) {
    for (const [k, v] of Object.entries(row as object))
      process.stdout.write(`${k.padEnd(28)} ${v instanceof Date ? v.toISOString() : v}\n`);
    process.stdout.write('\n');
  }
}

export function num(v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new AppError(400, 'Bad Request', `--${name} must be a number`);
  return n;
}

export function need(v: string | undefined, name: string): string {
  if (!v) throw new AppError(400, 'Bad Request', `${name} is required`);
  return v;
}

/** Columns padded to their widest cell; the last one left ragged. */
export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n') + '\n';
}
