-- RC04 control totals, provider figure beside the internal one: bank cash per account|currency
-- (minor units), exchange fill count and quantity per venue, custodian quantity per account|instrument.
WITH bank AS (
  SELECT s.account_id || '|' || s.currency AS dim,
         coalesce(sum(l.amount_minor), 0)::DECIMAL(38,0) AS statement_minor
  FROM rc04_statements s LEFT JOIN bank_statement_lines l USING (statement_id) GROUP BY 1
), ledger AS (
  SELECT s.account_id || '|' || s.currency AS dim, coalesce(sum(c.cash_minor), 0)::DECIMAL(38,0) AS ledger_minor
  FROM rc04_statements s LEFT JOIN rc04_ledger_cash c USING (statement_id) GROUP BY 1
), venue AS (
  SELECT venue_id, count(*) AS n, sum(fill_qty) AS qty FROM venue_fills WHERE in_window(venue_time_utc) GROUP BY venue_id
), internal AS (
  SELECT venue_id, count(*) AS n, sum(fill_qty) AS qty FROM executions WHERE in_window(executed_at) GROUP BY venue_id
), custodian AS (
  SELECT c.account_id || '|' || c.instrument_id AS dim, sum(c.quantity) AS qty FROM rc04_custodian c GROUP BY 1
), internal_positions AS (
  SELECT c.account_id || '|' || c.instrument_id AS dim,
         sum(coalesce((SELECT sum(p.quantity) FROM positions p WHERE p.as_of = getvariable('window_start')::TIMESTAMP AND p.account_id = c.account_id AND p.instrument_id = c.instrument_id), 0)
           + coalesce((SELECT sum(signed_side(e.side, e.fill_qty)) FROM executions e WHERE e.account_id = c.account_id AND e.instrument_id = c.instrument_id
                        AND e.executed_at >= getvariable('window_start')::TIMESTAMP AND e.executed_at < c.period_end_utc), 0)) AS qty
  FROM rc04_custodian c GROUP BY 1
)
SELECT 'bank_statement_cash_minor' AS name, dim, statement_minor::VARCHAR AS value FROM bank
UNION ALL SELECT 'ledger_cash_minor', dim, ledger_minor::VARCHAR FROM ledger
UNION ALL SELECT 'venue_fill_count_by_venue', venue_id, n::VARCHAR FROM venue
UNION ALL SELECT 'venue_fill_qty_by_venue', venue_id, dec_text(qty) FROM venue
UNION ALL SELECT 'internal_fill_count_by_venue', venue_id, n::VARCHAR FROM internal
UNION ALL SELECT 'internal_fill_qty_by_venue', venue_id, dec_text(qty) FROM internal
UNION ALL SELECT 'custodian_qty', dim, dec_text(qty) FROM custodian
UNION ALL SELECT 'internal_position_qty', dim, dec_text(qty) FROM internal_positions
UNION ALL SELECT 'statement_count', NULL, count(*)::VARCHAR FROM rc04_statements
ORDER BY 1, 2;
