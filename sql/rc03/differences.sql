-- RC03 differences (CONTRACT §4). Zero tolerance.
WITH exec_first AS (
  SELECT execution_id, min(executed_at) AS executed_at FROM rc03_executions GROUP BY execution_id
), trade_count AS (
  -- rc03_trade_sets holds distinct (set, execution) pairs, so count(*) counts distinct sets.
  SELECT execution_id, count(*) AS n FROM rc03_trade_sets GROUP BY execution_id
), multiple AS (
  -- The list of sets, built only for the executions named by several (an ordered string_agg over
  -- every execution costs seconds; a correlated subquery per execution is no better).
  SELECT t.execution_id, string_agg(t.posting_set_id, ',' ORDER BY t.posting_set_id) AS sets
  FROM rc03_trade_sets t SEMI JOIN trade_count c ON c.execution_id = t.execution_id AND c.n > 1
  GROUP BY t.execution_id
), trade_debits AS (
  -- Σ DEBIT legs of each unreversed TRADE set naming a scoped execution, in the execution's price
  -- currency (0 when the set has no leg in it), from the per (set, currency) sums of prepare.sql.
  SELECT e.execution_id, t.posting_set_id, e.notional_minor, e.price_currency,
         coalesce(d.debit_minor, 0)::DECIMAL(38,0) AS debit_minor, e.executed_at
  FROM rc03_executions e JOIN rc03_trade_sets t USING (execution_id)
  LEFT JOIN rc03_set_currency d ON d.posting_set_id = t.posting_set_id AND d.currency = e.price_currency
)
SELECT 'POSTING_SET_UNBALANCED' AS kind, b.posting_set_id || '|' || b.currency AS key,
       'debits ' || b.debit_minor || ' ≠ credits ' || b.credit_minor || ' (' || b.currency || ' minor units)' AS detail,
       epoch_us(s.first_effective_at)::VARCHAR AS record_time_us
FROM rc03_set_currency b JOIN rc03_sets s USING (posting_set_id)
WHERE b.debit_minor <> b.credit_minor
UNION ALL
SELECT 'EXECUTION_WITHOUT_POSTING', x.execution_id, 'no unreversed TRADE posting set names this execution',
       epoch_us(x.executed_at)::VARCHAR
FROM exec_first x ANTI JOIN trade_count t USING (execution_id)
UNION ALL
SELECT 'EXECUTION_MULTIPLE_POSTINGS', x.execution_id,
       t.n || ' unreversed TRADE posting sets name it: ' || m.sets,
       epoch_us(x.executed_at)::VARCHAR
FROM exec_first x JOIN trade_count t USING (execution_id) JOIN multiple m USING (execution_id) WHERE t.n > 1
UNION ALL
SELECT 'POSTING_AMOUNT_MISMATCH', execution_id,
       string_agg('set ' || posting_set_id || ' debits ' || debit_minor || ' ≠ notional ' || notional_minor || ' ' || price_currency, '; ' ORDER BY posting_set_id, debit_minor, notional_minor, price_currency),
       epoch_us(min(executed_at))::VARCHAR
FROM trade_debits WHERE debit_minor <> notional_minor GROUP BY execution_id
UNION ALL
SELECT 'BALANCE_ROLLFORWARD_MISMATCH', o.account_id || '|' || o.currency,
       'closing ' || c.balance_minor || ' ≠ opening ' || o.balance_minor || ' + net ' || coalesce(n.net_minor, 0),
       epoch_us(getvariable('window_end')::TIMESTAMP)::VARCHAR
FROM (SELECT DISTINCT account_id, currency, balance_minor FROM rc03_open) o
JOIN (SELECT DISTINCT account_id, currency, balance_minor FROM rc03_close) c USING (account_id, currency)
LEFT JOIN rc03_net n USING (account_id, currency)
WHERE c.balance_minor <> o.balance_minor + coalesce(n.net_minor, 0)
UNION ALL
SELECT 'RESERVATION_MISMATCH', c.account_id || '|' || c.currency,
       'reserved ' || c.reserved_minor || ' vs HELD reservations ' || coalesce(h.held_minor, 0) ||
       '; available ' || c.available_minor || ' vs balance − reserved ' || (c.balance_minor - c.reserved_minor),
       epoch_us(getvariable('window_end')::TIMESTAMP)::VARCHAR
FROM rc03_close c LEFT JOIN rc03_held h USING (account_id, currency)
WHERE c.reserved_minor <> coalesce(h.held_minor, 0) OR c.available_minor <> c.balance_minor - c.reserved_minor;
