import { createHash } from 'node:crypto';
import pg from 'pg';

// pg returns NUMERIC and BIGINT as strings by default; our amounts fit a double.
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

/** A statement's result: its rows, typed as the caller names them (`unknown` until it does). */
export interface QueryRows<T> {
  rows: T[];
  rowCount: number | null;
}

/**
 * What a statement runs on: the pool or a transaction's client. Rows are `unknown` unless the caller
 * names their type, an interface beside the SQL (or a zod schema where the row is parsed), so the
 * compiler checks every reader of a row against the columns its SQL selects.
 */
export interface Queryable {
  query<T = unknown>(text: string | pg.QueryConfig, values?: unknown[]): Promise<QueryRows<T>>;
}

const statementNames = new Map<string, string>();

/**
 * The query as a named (prepared) statement: each pooled connection parses and plans it once, later
 * calls send only the parameters. Names come from the SQL text, so equal text is one statement.
 * Only for parameterised SQL: a parameter-less call may hold several statements (migrations).
 */
export function prepared(text: string, values: unknown[]): pg.QueryConfig {
  let name = statementNames.get(text);
  if (!name) {
    name = 's' + createHash('sha1').update(text).digest('hex').slice(0, 20);
    if (statementNames.size < 5000) statementNames.set(text, name);
  }
  return { name, text, values };
}

/** Errors worth one more try: serialization failures, deadlocks, a dropped or refused connection,
 *  a server shutting down or restarting. Anything else is a bug or bad data and is not retried. */
export function isTransientDbError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  if (
    code === '40001' ||
    code === '40P01' ||
    code.startsWith('08') ||
    code === '57P01' ||
    code === '57P02' ||
    code === '57P03' ||
    code === '53300'
  )
    return true;
  if (code === 'ECONNRESET' || code === 'ECONNREFUSED' || code === 'EPIPE' || code === 'ETIMEDOUT') return true;
  const message = typeof e?.message === 'string' ? e.message : '';
  return /Connection terminated|connection (is )?closed|Client has encountered a connection error|terminating connection/i.test(message);
}

/** The one database access layer: a pool, plain SQL, and transactions. */
export class Db {
  private readonly connections: pg.Pool;
  /** The pool as a Queryable: one statement on any free connection, rows `unknown` until named. */
  readonly pool: Queryable;
  constructor(
    readonly url: string,
    max = 10,
  ) {
    this.connections = new pg.Pool({ connectionString: url, max });
    this.pool = this.connections;
    // A dropped idle connection must not crash the process; the pool replaces it.
    this.connections.on('error', () => undefined);
  }

  /** The rows of `sql`, typed `T`: name the row type (an interface beside the SQL). */
  async query<T = unknown>(sql: string, params: unknown[] = []): Promise<T[]> {
    const res = params.length ? await this.pool.query<T>(prepared(sql, params)) : await this.pool.query<T>(sql);
    return res.rows;
  }

  async one<T = unknown>(sql: string, params: unknown[] = []): Promise<T | undefined> {
    const rows = await this.query<T>(sql, params);
    return rows[0];
  }

  async tx<T>(fn: (client: Queryable) => Promise<T>): Promise<T> {
    const client = await this.connections.connect();
    // A connection that dies mid-transaction must not go back to the pool for the next caller.
    let broken: Error | undefined;
    const onError = (err: Error) => {
      broken = err;
    };
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      const out = await fn(client);
      await client.query('COMMIT');
      return out;
    } catch (err) {
      await client.query('ROLLBACK').catch((rollbackErr: Error) => {
        broken ??= rollbackErr;
      });
      throw err;
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  }

  close(): Promise<void> {
    return this.connections.end();
  }
}
