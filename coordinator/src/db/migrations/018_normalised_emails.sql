-- E-mail addresses are stored in one normalised form (NFKC, then a locale-independent lower-case;
-- coordinator/src/tenancy/email.ts), and accounts are looked up by exact equality on it (issue 36).
-- ASCII addresses are normalised here: their lower-case is the same in every collation. The others
-- are normalised by the coordinator at start, in JavaScript, as every entry point does. An address
-- whose normalised form another user already holds is left for an operator to merge.
UPDATE users u SET email = lower(u.email)
WHERE u.email !~ '[^\x01-\x7f]'
  AND u.email <> lower(u.email)
  AND NOT EXISTS (SELECT 1 FROM users o WHERE o.id <> u.id AND o.email = lower(u.email));
