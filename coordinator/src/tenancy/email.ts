import type { Db } from '../db/db.js';

/**
 * The one form of an e-mail address that the database stores, accounts are looked up by and every
 * sign-in limit is keyed on: NFKC (full-width and compatibility letters become plain ones), then
 * JavaScript's locale-independent lower-case. Keys and lookups that lower-cased separately (the
 * lock in JavaScript, the lookup with Postgres's collation-dependent lower()) disagreed on letters
 * like İ, so `alİce@…` was a fresh lock on the same account.
 */
export function normaliseEmail(raw: string): string {
  return raw.trim().normalize('NFKC').toLowerCase();
}

/**
 * Migration 018 normalised the ASCII addresses in SQL, where lower-case means the same everywhere;
 * the others are normalised here, with the function every entry point uses. An address whose
 * normalised form another user already holds is left as it is for an operator to merge.
 */
export async function normaliseStoredEmails(db: Db): Promise<number> {
  const rows = await db.query<{ id: string; email: string }>(`SELECT id, email FROM users WHERE email ~ '[^\\x01-\\x7f]'`);
  let changed = 0;
  for (const row of rows) {
    const normalised = normaliseEmail(row.email);
    if (normalised === row.email) continue;
    const updated = await db.query(
      `UPDATE users SET email = $2 WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM users WHERE email = $2) RETURNING id`,
      [row.id, normalised],
    );
    changed += updated.length;
  }
  return changed;
}
