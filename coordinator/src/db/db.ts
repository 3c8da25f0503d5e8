import pg from 'pg';

// pg returns NUMERIC and BIGINT as strings by default; our amounts fit a double.
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export type Queryable = Pick<pg.PoolClient, 'query'>;

/** The one database access layer: a pool, plain SQL, and transactions. */
export class Db {
  readonly pool: pg.Pool;
  constructor(readonly url: string, max = 10) {
    this.pool = new pg.Pool({ connectionString: url, max });
    // A dropped idle connection must not crash the process; the pool replaces it.
    this.pool.on('error', () => undefined);
  }

  async query<T extends pg.QueryResultRow = any>(sql: string, params: unknown[] = []): Promise<T[]> {
    const res = await this.pool.query<T>(sql, params);
    return res.rows;
  }

  async one<T extends pg.QueryResultRow = any>(sql: string, params: unknown[] = []): Promise<T | undefined> {
    const rows = await this.query<T>(sql, params);
    return rows[0];
  }

  async tx<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const out = await fn(client);
      await client.query('COMMIT');
      return out;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}
