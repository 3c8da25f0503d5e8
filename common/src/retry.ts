// Retrying with exponential backoff and jitter, the one way the coordinator and the agent do it:
// the task queue's completions over a database hiccup, the agent's calls to its coordinator, the
// transcription service's requests (retry), and the webhooks' queued attempts (backoffDelay alone,
// since each of those waits in pg-boss, not in a loop).

export interface Backoff {
  /** The wait after the first failure, in the caller's unit (retry: milliseconds). Each later one doubles. */
  first: number;
  /** The longest wait, before jitter; none by default. */
  max?: number;
  /** Each wait is spread evenly over ±jitter of itself (0.25: ±25 %), so that many clients failing
   *  together do not come back together. 0 (the default): exact. */
  jitter?: number;
  /** For tests: a number in [0, 1). */
  random?: () => number;
}

/** The wait after the `failedAttempt`-th failure (1 for the first): first · 2^(n−1), at most `max`, spread by `jitter`. */
export function backoffDelay(failedAttempt: number, b: Backoff): number {
  const wait = Math.min(b.first * 2 ** (failedAttempt - 1), b.max ?? Infinity);
  const jitter = b.jitter ?? 0;
  return jitter ? wait * (1 - jitter + 2 * jitter * (b.random ?? Math.random)()) : wait;
}

export interface RetryOptions extends Backoff {
  /** Whether a failure is worth another try; any other is thrown at once. */
  retryable: (err: unknown, attempt: number) => boolean;
  /** Tries in all, the first included; unlimited when absent (then `deadline` ends it). */
  tries?: number;
  /** No wait that would end after this time (ms since the epoch): the failure is thrown instead. */
  deadline?: number;
  /** Told of each failure about to be retried, before its wait. */
  onRetry?: (err: unknown, attempt: number, delayMs: number) => void;
  /** Aborting it ends a wait at once, rejecting with its reason. */
  signal?: AbortSignal;
}

/** Runs `fn` (given its attempt number, 1 for the first) until it succeeds, the failure is not
 *  retryable, or the tries or the deadline run out; then the last failure is thrown. */
export async function retry<T>(fn: (attempt: number) => Promise<T>, opts: RetryOptions): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      const delayMs = backoffDelay(attempt, opts);
      const outOfTries = opts.tries !== undefined && attempt >= opts.tries;
      const pastDeadline = opts.deadline !== undefined && Date.now() + delayMs > opts.deadline;
      if (outOfTries || pastDeadline || !opts.retryable(err, attempt)) throw err;
      opts.onRetry?.(err, attempt, delayMs);
      await sleep(delayMs, opts.signal);
    }
  }
}

/** Waits `ms`; an abort of `signal` ends the wait with its reason. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason ?? new Error('aborted'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
