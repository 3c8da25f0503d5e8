import { TooManyRequestsError } from '../errors.js';
import { PLANS, type Plan } from './plans.js';
import type { Db } from '../db/db.js';

// Contract section 8: file routes are limited by plan, social routes for API-key calls; job creation
// (issue 36) by plan per organization, as a failed job's webhook is cheap to cause. Token
// buckets per (group, organization, credential): `limit` requests a minute with bursts up to
// `limit`, refilled continuously. The buckets live in Postgres (rate_buckets), so the limit holds
// across every coordinator sharing the database, measured by the database's one clock.
export type RateGroup = 'files' | 'social' | 'jobs';

export interface RateLimits {
  /** Requests per minute on the file routes, by plan; 0 = unlimited. */
  files: Record<Plan, number>;
  /** Jobs created (or retried) per minute per organization, by plan; 0 = unlimited. */
  jobs: Record<Plan, number>;
  /** Requests per minute on the social routes for API-key callers; 0 = unlimited. */
  socialApiKey: number;
}

export interface RateDecision {
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSec: number;
  /** Seconds until the next request would be admitted (0 when this one was). */
  retryAfterSec: number;
}

// One statement: the row lock of INSERT … ON CONFLICT serialises concurrent takes of one bucket on
// any coordinator. The refill is computed from the row as it was; `admitted` records whether a whole
// token was there to take.
const TAKE = `
INSERT INTO rate_buckets AS b (key, tokens, admitted, updated_at) VALUES ($1, $2::float8 - 1, true, now())
ON CONFLICT (key) DO UPDATE SET
  tokens = LEAST($2::float8, b.tokens + EXTRACT(EPOCH FROM now() - b.updated_at) * $2::float8 / 60)
           - CASE WHEN LEAST($2::float8, b.tokens + EXTRACT(EPOCH FROM now() - b.updated_at) * $2::float8 / 60) >= 1 THEN 1 ELSE 0 END,
  admitted = LEAST($2::float8, b.tokens + EXTRACT(EPOCH FROM now() - b.updated_at) * $2::float8 / 60) >= 1,
  updated_at = now()
RETURNING tokens, admitted`;

/** A bucket untouched this long is full again: its row carries nothing. */
const FORGET_AFTER = '2 minutes';

export class RateLimiter {
  private lastSweepMs = 0;

  constructor(
    readonly limits: RateLimits,
    private readonly db: Pick<Db, 'query'>,
  ) {}

  /** The per-minute limit that applies, or 0 when this call is not limited. */
  limitFor(group: RateGroup, plan: Plan, viaApiKey: boolean): number {
    if (group === 'files') return this.limits.files[plan] ?? 0;
    if (group === 'jobs') return this.limits.jobs[plan] ?? 0;
    return viaApiKey ? this.limits.socialApiKey : 0;
  }

  /** Takes one token from the bucket named by `key`; `retryAfterSec` > 0 means refused. */
  async take(key: string, limit: number): Promise<RateDecision> {
    this.sweep();
    const [row] = await this.db.query<{ tokens: number; admitted: boolean }>(TAKE, [key, limit]);
    const tokens = Number(row.tokens);
    const perSec = limit / 60;
    return {
      limit,
      remaining: Math.max(0, Math.floor(tokens)),
      resetSec: Math.ceil((limit - tokens) / perSec),
      retryAfterSec: row.admitted ? 0 : Math.max(1, Math.ceil((1 - tokens) / perSec)),
    };
  }

  /** Full buckets carry no information: forget them now and then, so the table follows active callers. */
  private sweep(): void {
    const now = Date.now();
    if (now - this.lastSweepMs < 60_000) return;
    this.lastSweepMs = now;
    this.db.query(`DELETE FROM rate_buckets WHERE updated_at < now() - interval '${FORGET_AFTER}'`).catch(() => undefined);
  }
}

/** "free,starter,pro,business" per-minute figures, as the RATE_LIMIT_FILES_PER_MINUTE setting gives them. */
export function parsePlanLimits(text: string): Record<Plan, number> {
  const figures = text.split(',').map((s) => Number(s.trim()));
  if (figures.length !== PLANS.length || figures.some((n) => !Number.isInteger(n) || n < 0)) {
    throw new Error(`expected ${PLANS.length} non-negative integers (${PLANS.join(',')}), got "${text}"`);
  }
  return Object.fromEntries(PLANS.map((plan, i) => [plan, figures[i]!])) as Record<Plan, number>;
}

export function tooManyRequests(decision: RateDecision): TooManyRequestsError {
  return new TooManyRequestsError(
    `Rate limit of ${decision.limit} requests per minute exceeded; retry in ${decision.retryAfterSec} s`,
    decision.retryAfterSec,
  );
}
