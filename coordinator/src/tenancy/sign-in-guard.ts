import { AppError, ServiceBusyError, TooManyRequestsError } from '../errors.js';
import type { Db } from '../db/db.js';
import { normaliseEmail } from './email.js';

// Two guards on password sign-in beyond the per-minute buckets:
// - per account, at most FAILURES_PER_HOUR failed attempts in an hour (ASVS 2.2.1). Each attempt
//   takes one failure up front, atomically, and gives it back when the password was right, so
//   concurrent guesses on several coordinators cannot run past the limit. Once the hour's failures
//   are spent, every attempt on that account is refused (429, Retry-After to the window's end), the
//   right password included: a guess that succeeds then would tell the guesser it was right.
// - per process, at most `concurrency` password hashes at once. scrypt runs on libuv's thread pool
//   (4 threads unless UV_THREADPOOL_SIZE says otherwise), which file and DNS work share; a flood of
//   unauthenticated sign-ins must leave it threads. Up to `queueLength` more wait their turn (a
//   waiting sign-in holds no memory to speak of); beyond that an attempt is answered 503 with
//   Retry-After at once rather than queueing without end.

export const FAILURES_PER_HOUR = 100;
const WINDOW = "interval '1 hour'";

const TAKE_ATTEMPT = `
INSERT INTO sign_in_failures AS f (account, window_started_at, failures) VALUES ($1, now(), 1)
ON CONFLICT (account) DO UPDATE SET
  window_started_at = CASE WHEN f.window_started_at <= now() - ${WINDOW} THEN now() ELSE f.window_started_at END,
  failures = CASE WHEN f.window_started_at <= now() - ${WINDOW} THEN 1 ELSE f.failures + 1 END
WHERE f.window_started_at <= now() - ${WINDOW} OR f.failures < $2
RETURNING failures`;

export class SignInGuard {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  private lastSweepMs = 0;

  constructor(
    private readonly db: Pick<Db, 'query' | 'one'>,
    readonly concurrency: number,
    readonly queueLength: number,
  ) {}

  /** Runs `check` (which hashes the password) as one attempt on `email`'s account; a 401 from it is
   *  a failure that counts; a success, or a refusal for load or a fault, gives the attempt back. */
  async attempt<T>(email: string, check: () => Promise<T>): Promise<T> {
    const account = normaliseEmail(email);
    this.sweep();
    await this.takeAttempt(account);
    let failed = false;
    try {
      return await this.hashing(check);
    } catch (err) {
      failed = err instanceof AppError && err.status === 401;
      throw err;
    } finally {
      if (!failed)
        await this.db.query('UPDATE sign_in_failures SET failures = failures - 1 WHERE account = $1 AND failures > 0', [account]);
    }
  }

  private async takeAttempt(account: string): Promise<void> {
    const taken = await this.db.query<{ failures: number }>(TAKE_ATTEMPT, [account, FAILURES_PER_HOUR]);
    if (taken.length > 0) return;
    const row = await this.db.one<{ wait: number }>(
      `SELECT CEIL(EXTRACT(EPOCH FROM window_started_at + ${WINDOW} - now()))::int AS wait FROM sign_in_failures WHERE account = $1`,
      [account],
    );
    const retryAfterSec = Math.max(1, row?.wait ?? 1);
    throw new TooManyRequestsError(
      `Too many failed sign-ins to this account (${FAILURES_PER_HOUR} an hour); sign-in is refused for ${Math.ceil(retryAfterSec / 60)} min`,
      retryAfterSec,
    );
  }

  /** At most `concurrency` at once, `queueLength` waiting; beyond, 503 at once. */
  private async hashing<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.concurrency) {
      if (this.waiting.length >= this.queueLength) {
        throw new ServiceBusyError('Too many sign-ins at once; retry in a second', 1);
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.active++;
    }
    try {
      return await fn();
    } finally {
      // The slot passes straight to the next waiter, if any.
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }

  /** Windows past their hour carry nothing: forget them now and then. */
  private sweep(): void {
    const now = Date.now();
    if (now - this.lastSweepMs < 60_000) return;
    this.lastSweepMs = now;
    this.db.query(`DELETE FROM sign_in_failures WHERE window_started_at < now() - ${WINDOW}`).catch(() => undefined);
  }
}
