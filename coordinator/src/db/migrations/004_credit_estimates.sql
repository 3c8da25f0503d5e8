-- Once an agent has probed a job's video, the job's reservation grows from the minimum to the
-- estimated price: one 'estimate' row per job, kept apart from the 'reserve' made at create.
ALTER TABLE credit_ledger DROP CONSTRAINT credit_ledger_kind_check;
ALTER TABLE credit_ledger ADD CONSTRAINT credit_ledger_kind_check CHECK (kind IN ('grant', 'reserve', 'estimate', 'charge', 'release'));
