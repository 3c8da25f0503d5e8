import type { Queryable } from '../db/db.js';
import { AppError } from '../errors.js';

// Credit movements for a job: reserve at accept, charge at completion, release on failure.
// The ledger's unique (job_id, kind) index makes a second charge or release impossible.

export async function reserveCredits(c: Queryable, organizationId: string, jobId: string, amount: number): Promise<void> {
  const res = await c.query(
    `UPDATE organizations SET reserved_credits = reserved_credits + $2 WHERE id = $1 AND credits - reserved_credits >= $2`,
    [organizationId, amount],
  );
  if (res.rowCount === 0) throw new AppError(403, 'noEnoughCredit', 'Not enough credits to start this job');
  await c.query(`INSERT INTO credit_ledger (organization_id, job_id, kind, amount) VALUES ($1, $2, 'reserve', $3)`, [
    organizationId,
    jobId,
    amount,
  ]);
}

/**
 * Grows a job's reservation to `total` (the price estimated from the probed video). A job has one
 * `estimate` row (the ledger's `credit_ledger_once` index): an agent that reports a longer length
 * later (audio that decodes past the streams' end) grows that row, never adds a second.
 * Returns false when the organization's available credits cannot cover the difference.
 */
export async function reserveEstimate(
  c: Queryable,
  organizationId: string,
  jobId: string,
  reserved: number,
  total: number,
): Promise<boolean> {
  const extra = Math.round((total - reserved) * 100) / 100;
  if (extra <= 0) return true;
  const res = await c.query(
    `UPDATE organizations SET reserved_credits = reserved_credits + $2 WHERE id = $1 AND credits - reserved_credits >= $2`,
    [organizationId, extra],
  );
  if (res.rowCount === 0) return false;
  await c.query(
    `INSERT INTO credit_ledger (organization_id, job_id, kind, amount) VALUES ($1, $2, 'estimate', $3)
     ON CONFLICT (job_id, kind) WHERE job_id IS NOT NULL DO UPDATE SET amount = credit_ledger.amount + EXCLUDED.amount`,
    [organizationId, jobId, extra],
  );
  await c.query(`UPDATE jobs SET reserved_credits = $2 WHERE id = $1`, [jobId, total]);
  return true;
}

/** Charges the final cost in place of the reservation. Returns false when the balance cannot cover it. */
export async function chargeCredits(c: Queryable, organizationId: string, jobId: string, reserved: number, cost: number): Promise<boolean> {
  const res = await c.query(
    `UPDATE organizations SET credits = credits - $3, reserved_credits = GREATEST(reserved_credits - $2, 0)
     WHERE id = $1 AND credits - (reserved_credits - $2) >= $3`,
    [organizationId, reserved, cost],
  );
  if (res.rowCount === 0) return false;
  await c.query(`INSERT INTO credit_ledger (organization_id, job_id, kind, amount) VALUES ($1, $2, 'charge', $3)`, [
    organizationId,
    jobId,
    -cost,
  ]);
  return true;
}

export async function releaseCredits(c: Queryable, organizationId: string, jobId: string, reserved: number): Promise<void> {
  const done = await c.query(
    `INSERT INTO credit_ledger (organization_id, job_id, kind, amount) VALUES ($1, $2, 'release', $3) ON CONFLICT DO NOTHING`,
    [organizationId, jobId, reserved],
  );
  if (done.rowCount === 0) return;
  await c.query(`UPDATE organizations SET reserved_credits = GREATEST(reserved_credits - $2, 0) WHERE id = $1`, [organizationId, reserved]);
}
