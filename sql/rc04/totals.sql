-- RC04 control totals, provider figure beside the internal one (CONTRACT §4): bank cash per
-- account|currency (minor units, bank's view) against ledger DEBIT − CREDIT in the statements'
-- mapped intervals; exchange fill count and quantity per venue (venue_fills by mapped UTC time)
-- against executions; custodian quantity per account|instrument against positions + fills.
WITH bank AS (
  SELECT s.account_id || '|' || s.currency AS dim, minor(sum(ls.lines_minor)) AS statement_minor
  FROM (SELECT DISTINCT statement_id, account_id, currency FROM rc04_periods) s JOIN rc04_line_sums ls USING (statement_id) GROUP BY 1
), ledger AS (
  SELECT p.account_id || '|' || p.currency AS dim, minor(coalesce(sum(c.cash_minor), 0)) AS ledger_minor
  FROM rc04_periods p LEFT JOIN rc04_ledger_cash c USING (statement_id, account_id, currency, period_start_utc, period_end_utc) GROUP BY 1
), venue AS (
  SELECT venue_id, count(*) AS n, sum(fill_qty) AS qty FROM venue_fills WHERE in_window(venue_time_utc) GROUP BY venue_id
), internal AS (
  SELECT venue_id, count(*) AS n, sum(fill_qty) AS qty FROM executions WHERE in_window(executed_at) GROUP BY venue_id
), custodian AS (
  SELECT account_id || '|' || instrument_id AS dim, sum(quantity) AS qty, sum(internal_qty) AS internal_qty FROM rc04_custodian_internal GROUP BY 1
)
SELECT 'bank_statement_cash_minor' AS name, dim, statement_minor::VARCHAR AS value FROM bank
UNION ALL SELECT 'ledger_cash_minor', dim, ledger_minor::VARCHAR FROM ledger
UNION ALL SELECT 'venue_fill_count_by_venue', venue_id, n::VARCHAR FROM venue
UNION ALL SELECT 'venue_fill_qty_by_venue', venue_id, dec_text(qty) FROM venue
UNION ALL SELECT 'internal_fill_count_by_venue', venue_id, n::VARCHAR FROM internal
UNION ALL SELECT 'internal_fill_qty_by_venue', venue_id, dec_text(qty) FROM internal
UNION ALL SELECT 'custodian_qty', dim, dec_text(qty) FROM custodian
UNION ALL SELECT 'internal_position_qty', dim, dec_text(internal_qty) FROM custodian
UNION ALL SELECT 'statement_count', NULL, count(DISTINCT statement_id)::VARCHAR FROM rc04_statements
ORDER BY 1, 2;
