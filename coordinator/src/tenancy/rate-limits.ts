import { AppError } from '../../../common/src/errors.js';
import { PLANS, type Plan } from './plans.js';

// Contract section 8: file routes are limited by plan, social routes for API-key calls. Token
// buckets per (group, organization, credential): `limit` requests a minute with bursts up to
// `limit`, refilled continuously. Kept in this coordinator's memory: with several coordinators
// behind a balancer each enforces its own share (documented in docs/api.md).
export type RateGroup = 'files' | 'social';

export interface RateLimits {
  /** Requests per minute on the file routes, by plan; 0 = unlimited. */
  files: Record<Plan, number>;
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

interface Bucket {
  tokens: number;
  updatedMs: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private lastSweepMs = 0;

  constructor(readonly limits: RateLimits, private readonly now: () => number = Date.now) {}

  /** The per-minute limit that applies, or 0 when this call is not limited. */
  limitFor(group: RateGroup, plan: Plan, viaApiKey: boolean): number {
    if (group === 'files') return this.limits.files[plan] ?? 0;
    return viaApiKey ? this.limits.socialApiKey : 0;
  }

  /** Takes one token from the bucket named by `key`; `retryAfterSec` > 0 means refused. */
  take(key: string, limit: number): RateDecision {
    const now = this.now();
    this.sweep(now);
    const perMs = limit / 60_000;
    const bucket = this.buckets.get(key) ?? { tokens: limit, updatedMs: now };
    bucket.tokens = Math.min(limit, bucket.tokens + (now - bucket.updatedMs) * perMs);
    bucket.updatedMs = now;
    let retryAfterSec = 0;
    if (bucket.tokens >= 1) bucket.tokens -= 1;
    else retryAfterSec = Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000));
    this.buckets.set(key, bucket);
    return {
      limit,
      remaining: Math.floor(bucket.tokens),
      resetSec: Math.ceil((limit - bucket.tokens) / perMs / 1000),
      retryAfterSec,
    };
  }

  /** Full buckets carry no information: forget them so memory follows active callers only. */
  private sweep(now: number): void {
    if (now - this.lastSweepMs < 60_000) return;
    this.lastSweepMs = now;
    for (const [key, bucket] of this.buckets) if (now - bucket.updatedMs > 60_000) this.buckets.delete(key);
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

export function tooManyRequests(decision: RateDecision): AppError {
  return new AppError(429, 'Too Many Requests', `Rate limit of ${decision.limit} requests per minute exceeded; retry in ${decision.retryAfterSec} s`);
}
