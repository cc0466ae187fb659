-- Legs of every posting set summed per currency, in ONE pass over ledger_postings. The scope, the
-- TRADE/REVERSAL flags, the set balances, the DEBIT totals behind POSTING_AMOUNT_MISMATCH and the
-- per-currency totals are all read from this table instead of re-scanning the ledger for each.
-- amount_minor is positive (CONTRACT §2), so re-summing these sums gives the same exact values.
CREATE OR REPLACE TEMP TABLE rc03_set_currency AS
SELECT posting_set_id, currency,
       minor(coalesce(sum(amount_minor) FILTER (WHERE direction = 'DEBIT'), 0)) AS debit_minor,
       minor(coalesce(sum(amount_minor) FILTER (WHERE direction = 'CREDIT'), 0)) AS credit_minor,
       count(*) AS leg_count,
       count(*) FILTER (WHERE in_window(effective_at)) AS window_leg_count,
       min(effective_at) FILTER (WHERE in_window(effective_at)) AS first_effective_at,
       bool_or(kind = 'TRADE') AS has_trade,
       bool_or(kind = 'REVERSAL') AS has_reversal
FROM ledger_postings GROUP BY posting_set_id, currency;

-- Per posting set, in one grouped pass over the per (set, currency) sums: whether it is in scope
-- (any leg with effective_at in the window), its first leg in the window, and its TRADE/REVERSAL
-- flags (a TRADE set has a TRADE leg, a REVERSAL set a REVERSAL leg).
CREATE OR REPLACE TEMP TABLE rc03_set_flags AS
SELECT posting_set_id, min(first_effective_at) AS first_effective_at, sum(window_leg_count) > 0 AS in_scope,
       bool_or(has_trade) AS has_trade, bool_or(has_reversal) AS has_reversal
FROM rc03_set_currency GROUP BY posting_set_id;

-- RC03 scope: posting sets with any leg whose effective_at is in the window.
CREATE OR REPLACE TEMP VIEW rc03_sets AS
SELECT posting_set_id, first_effective_at FROM rc03_set_flags WHERE in_scope;

-- Unreversed TRADE sets and the executions they name. A TRADE set is reversed when a REVERSAL set
-- names it in reverses_posting_set_id. The pairs are one GROUP BY over the legs naming an
-- execution (not a DISTINCT over a join); the few legs naming a reversed set are found by a
-- filtered scan.
CREATE OR REPLACE TEMP TABLE rc03_trade_sets AS
WITH reversed AS (
  SELECT l.reverses_posting_set_id AS posting_set_id
  FROM ledger_postings l SEMI JOIN rc03_set_flags r ON r.posting_set_id = l.posting_set_id AND r.has_reversal
  WHERE l.reverses_posting_set_id IS NOT NULL
  GROUP BY l.reverses_posting_set_id
), named AS (
  SELECT posting_set_id, execution_id FROM ledger_postings WHERE execution_id IS NOT NULL GROUP BY posting_set_id, execution_id
)
SELECT n.posting_set_id, n.execution_id
FROM named n
SEMI JOIN rc03_set_flags t ON t.posting_set_id = n.posting_set_id AND t.has_trade
ANTI JOIN reversed r ON r.posting_set_id = n.posting_set_id;

CREATE OR REPLACE TEMP VIEW rc03_executions AS SELECT * FROM executions WHERE in_window(executed_at);

-- Each scoped execution once, at its earliest executed_at (EXECUTION_WITHOUT_POSTING and
-- EXECUTION_MULTIPLE_POSTINGS both read it).
CREATE OR REPLACE TEMP TABLE rc03_execution_first AS
SELECT execution_id, min(executed_at) AS executed_at FROM rc03_executions GROUP BY execution_id;

-- Snapshots at exactly the window start and end.
CREATE OR REPLACE TEMP TABLE rc03_open AS SELECT * FROM account_balances WHERE as_of = getvariable('window_start')::TIMESTAMP;
CREATE OR REPLACE TEMP TABLE rc03_close AS SELECT * FROM account_balances WHERE as_of = getvariable('window_end')::TIMESTAMP;

-- Σ signed postings (CREDIT +, DEBIT -) with effective_at in the window, per account and currency.
CREATE OR REPLACE TEMP TABLE rc03_net AS
SELECT account_id, currency, minor(sum(signed_minor(direction, amount_minor))) AS net_minor
FROM ledger_postings WHERE in_window(effective_at) GROUP BY account_id, currency;

-- Reservations whose state at the window end is HELD (state at t: highest version with updated_at < t).
CREATE OR REPLACE TEMP TABLE rc03_held AS
SELECT account_id, currency, minor(sum(amount_minor)) AS held_minor FROM (
  SELECT * FROM reservations WHERE updated_at < getvariable('window_end')
  QUALIFY row_number() OVER (PARTITION BY reservation_id ORDER BY version DESC, updated_at DESC, _source) = 1
) WHERE status = 'HELD' GROUP BY account_id, currency;
