import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { Queryable } from '../db/db.js';
import type { Logger } from '@shorts/common/logger';

const NOTIFY_CHANNEL = 'shorts_tasks';
/** Wakes every waiter whatever its types (start, reconnect, stop). */
export const WAKE_ALL = '*';

/**
 * Wakes agents' long-polls when work of their types may have appeared. Enqueues NOTIFY at commit;
 * every coordinator LISTENs, so an enqueue by any of them wakes this one's waiters at once. The
 * events are the task types (and WAKE_ALL).
 */
export class TaskWakeups extends EventEmitter {
  /** NOTIFYs seen per task type: a waiter compares before and after its lease query, so a wake-up
   *  that arrives while the query runs is not lost. */
  private readonly counts = new Map<string, number>();
  private listener?: pg.Client;
  private stopped = false;

  constructor(
    private readonly databaseUrl: string,
    private readonly log: Logger,
  ) {
    super();
    this.setMaxListeners(0);
  }

  wake(type: string): void {
    this.counts.set(type, (this.counts.get(type) ?? 0) + 1);
    this.emit(type);
  }

  count(types: readonly string[]): number {
    let n = this.counts.get(WAKE_ALL) ?? 0;
    for (const t of types) n += this.counts.get(t) ?? 0;
    return n;
  }

  /** Delivered at commit, so an agent never wakes for a task it cannot see yet. */
  async notify(c: Queryable, type: string): Promise<void> {
    await c.query(`SELECT pg_notify('${NOTIFY_CHANNEL}', $1)`, [type]);
  }

  /** LISTEN. If the connection drops, long-polls still end on their timeout while it reconnects. */
  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.databaseUrl });
    client.on('error', (err) => {
      if (this.stopped) return;
      this.log.warn('task listener lost its connection; reconnecting', { err: err.message });
      client.end().catch(() => undefined);
      this.reconnect();
    });
    await client.connect();
    // The payload is the task type: only waiters that can take that type wake.
    client.on('notification', (msg) => this.wake(msg.payload || WAKE_ALL));
    await client.query(`LISTEN ${NOTIFY_CHANNEL}`);
    this.listener = client;
    // Anything enqueued while we were not listening.
    this.wake(WAKE_ALL);
  }

  private reconnect(): void {
    setTimeout(() => {
      if (this.stopped) return;
      this.start().catch((err) => {
        this.log.error('task listener reconnect failed', { err: err.message });
        this.reconnect();
      });
    }, 1000).unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake(WAKE_ALL);
    await this.listener?.end().catch(() => undefined);
  }

  /** Resolves on a wake-up for one of the types, after `ms`, or on abort, whichever comes first. */
  waitFor(types: readonly string[], ms: number, signal?: AbortSignal): Promise<void> {
    const events = [...new Set([...types, WAKE_ALL])];
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        for (const e of events) this.off(e, done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      for (const e of events) this.on(e, done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}
