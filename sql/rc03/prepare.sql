-- RC03 scope: posting sets with any leg whose effective_at is in the window.
CREATE OR REPLACE TEMP TABLE rc03_sets AS
SELECT posting_set_id, min(effective_at) FILTER (WHERE in_window(effective_at)) AS first_effective_at
FROM ledger_postings GROUP BY posting_set_id
HAVING count(*) FILTER (WHERE in_window(effective_at)) > 0;

-- Unreversed TRADE sets and the executions they name. A TRADE set has a TRADE leg; it is reversed
-- when a REVERSAL set (a set with a REVERSAL leg) names it in reverses_posting_set_id.
CREATE OR REPLACE TEMP TABLE rc03_trade_sets AS
WITH trade AS (
  SELECT DISTINCT posting_set_id FROM ledger_postings WHERE kind = 'TRADE'
), reversal_sets AS (
  SELECT DISTINCT posting_set_id FROM ledger_postings WHERE kind = 'REVERSAL'
), reversed AS (
  SELECT DISTINCT l.reverses_posting_set_id AS posting_set_id
  FROM ledger_postings l SEMI JOIN reversal_sets r ON r.posting_set_id = l.posting_set_id
  WHERE l.reverses_posting_set_id IS NOT NULL
)
SELECT DISTINCT l.posting_set_id, l.execution_id
FROM ledger_postings l
SEMI JOIN trade t ON t.posting_set_id = l.posting_set_id
ANTI JOIN reversed r ON r.posting_set_id = l.posting_set_id
WHERE l.execution_id IS NOT NULL;

CREATE OR REPLACE TEMP VIEW rc03_executions AS SELECT * FROM executions WHERE in_window(executed_at);

-- Snapshots at exactly the window start and end.
CREATE OR REPLACE TEMP TABLE rc03_open AS SELECT * FROM account_balances WHERE as_of = getvariable('window_start')::TIMESTAMP;
CREATE OR REPLACE TEMP TABLE rc03_close AS SELECT * FROM account_balances WHERE as_of = getvariable('window_end')::TIMESTAMP;

-- Σ signed postings (CREDIT +, DEBIT -) with effective_at in the window, per account and currency.
CREATE OR REPLACE TEMP TABLE rc03_net AS
SELECT account_id, currency, sum(signed_minor(direction, amount_minor))::DECIMAL(38,0) AS net_minor
FROM ledger_postings WHERE in_window(effective_at) GROUP BY account_id, currency;

-- Reservations whose state at the window end is HELD (state at t: highest version with updated_at < t).
CREATE OR REPLACE TEMP TABLE rc03_held AS
SELECT account_id, currency, sum(amount_minor)::DECIMAL(38,0) AS held_minor FROM (
  SELECT * FROM reservations WHERE updated_at < getvariable('window_end')
  QUALIFY row_number() OVER (PARTITION BY reservation_id ORDER BY version DESC, updated_at DESC, _source) = 1
) WHERE status = 'HELD' GROUP BY account_id, currency;
