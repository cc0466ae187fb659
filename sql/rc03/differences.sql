-- RC03 differences (CONTRACT §4). Zero tolerance. One query per kind: a query holds only its own
-- joins, so on a large day no statement keeps several kinds' hash tables at once.

-- The few unbalanced (set, currency) rows first, materialized, so the join with the scoped sets
-- builds its hash table on them rather than on every set.
WITH unbalanced AS MATERIALIZED (
  SELECT posting_set_id, currency, debit_minor, credit_minor FROM rc03_set_currency WHERE debit_minor <> credit_minor
)
SELECT 'POSTING_SET_UNBALANCED' AS kind, b.posting_set_id || '|' || b.currency AS key,
       'debits ' || b.debit_minor || ' ≠ credits ' || b.credit_minor || ' (' || b.currency || ' minor units)' AS detail,
       epoch_us(s.first_effective_at)::VARCHAR AS record_time_us
FROM unbalanced b JOIN rc03_sets s USING (posting_set_id);

-- rc03_trade_sets holds distinct (set, execution) pairs, so count(*) counts distinct sets.
SELECT 'EXECUTION_WITHOUT_POSTING' AS kind, x.execution_id AS key, 'no unreversed TRADE posting set names this execution' AS detail,
       epoch_us(x.executed_at)::VARCHAR AS record_time_us
FROM rc03_execution_first x
ANTI JOIN rc03_trade_sets t USING (execution_id);

-- The list of sets is built only for the executions named by several (an ordered string_agg over
-- every execution costs seconds; a correlated subquery per execution is no better).
WITH multiple AS (
  SELECT t.execution_id, count(*) AS n, string_agg(t.posting_set_id, ',' ORDER BY t.posting_set_id) AS sets
  FROM rc03_trade_sets t
  SEMI JOIN (SELECT execution_id FROM rc03_trade_sets GROUP BY execution_id HAVING count(*) > 1) c ON c.execution_id = t.execution_id
  GROUP BY t.execution_id
)
SELECT 'EXECUTION_MULTIPLE_POSTINGS' AS kind, m.execution_id AS key,
       m.n || ' unreversed TRADE posting sets name it: ' || m.sets AS detail,
       epoch_us(x.executed_at)::VARCHAR AS record_time_us
FROM multiple m JOIN rc03_execution_first x USING (execution_id);

-- Σ DEBIT legs of each unreversed TRADE set naming a scoped execution, in the execution's price
-- currency (0 when the set has no leg in it), from the per (set, currency) sums of prepare.sql.
WITH trade_debits AS (
  SELECT e.execution_id, t.posting_set_id, e.notional_minor, e.price_currency,
         minor(coalesce(d.debit_minor, 0)) AS debit_minor, e.executed_at
  FROM rc03_executions e JOIN rc03_trade_sets t USING (execution_id)
  LEFT JOIN rc03_set_currency d ON d.posting_set_id = t.posting_set_id AND d.currency = e.price_currency
)
SELECT 'POSTING_AMOUNT_MISMATCH' AS kind, execution_id AS key,
       string_agg('set ' || posting_set_id || ' debits ' || debit_minor || ' ≠ notional ' || notional_minor || ' ' || price_currency, '; ' ORDER BY posting_set_id, debit_minor, notional_minor, price_currency) AS detail,
       epoch_us(min(executed_at))::VARCHAR AS record_time_us
FROM trade_debits WHERE debit_minor <> notional_minor GROUP BY execution_id;

SELECT 'BALANCE_ROLLFORWARD_MISMATCH' AS kind, o.account_id || '|' || o.currency AS key,
       'closing ' || c.balance_minor || ' ≠ opening ' || o.balance_minor || ' + net ' || coalesce(n.net_minor, 0) AS detail,
       epoch_us(getvariable('window_end')::TIMESTAMP)::VARCHAR AS record_time_us
FROM (SELECT DISTINCT account_id, currency, balance_minor FROM rc03_open) o
JOIN (SELECT DISTINCT account_id, currency, balance_minor FROM rc03_close) c USING (account_id, currency)
LEFT JOIN rc03_net n USING (account_id, currency)
WHERE c.balance_minor <> o.balance_minor + coalesce(n.net_minor, 0);

SELECT 'RESERVATION_MISMATCH' AS kind, c.account_id || '|' || c.currency AS key,
       'reserved ' || c.reserved_minor || ' vs HELD reservations ' || coalesce(h.held_minor, 0) ||
       '; available ' || c.available_minor || ' vs balance − reserved ' || (c.balance_minor - c.reserved_minor) AS detail,
       epoch_us(getvariable('window_end')::TIMESTAMP)::VARCHAR AS record_time_us
FROM rc03_close c LEFT JOIN rc03_held h USING (account_id, currency)
WHERE c.reserved_minor <> coalesce(h.held_minor, 0) OR c.available_minor <> c.balance_minor - c.reserved_minor;
