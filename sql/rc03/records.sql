-- RC03 records behind each difference (docs/records.md). Sides: debit and credit (the legs of an
-- unbalanced set), execution and ledger (an execution against the posting sets naming it),
-- opening, closing and ledger (a balance roll-forward), snapshot and reservation. Record keys:
-- posting_set_id|leg, execution_id, account_id|currency|as_of, reservation_id|version.

-- POSTING_SET_UNBALANCED (key posting_set_id|currency): the set's legs in that currency, by direction.
SELECT d.kind, d.key, lower(l.direction) AS side, 'ledger_postings' AS dataset, l._source AS source, l.posting_set_id || '|' || l.leg AS record_key
FROM control_differences d
JOIN ledger_postings l ON l.posting_set_id = split_part(d.key, '|', 1) AND l.currency = split_part(d.key, '|', 2) AND in_key_parts(l.posting_set_id)
WHERE d.kind = 'POSTING_SET_UNBALANCED';

-- Kinds keyed by execution_id: the execution's rows in scope.
SELECT d.kind, d.key, 'execution' AS side, 'executions' AS dataset, e._source AS source, e.execution_id AS record_key
FROM control_differences d JOIN rc03_executions e ON e.execution_id = d.key AND in_key_parts(e.execution_id)
WHERE d.kind IN ('EXECUTION_WITHOUT_POSTING', 'EXECUTION_MULTIPLE_POSTINGS', 'POSTING_AMOUNT_MISMATCH');

-- EXECUTION_WITHOUT_POSTING: every leg naming the execution (a reversed set and its reversal, a
-- set that is not TRADE); none when it was never posted.
SELECT d.kind, d.key, 'ledger' AS side, 'ledger_postings' AS dataset, l._source AS source, l.posting_set_id || '|' || l.leg AS record_key
FROM control_differences d JOIN ledger_postings l ON l.execution_id = d.key AND in_key_parts(l.execution_id)
WHERE d.kind = 'EXECUTION_WITHOUT_POSTING';

-- EXECUTION_MULTIPLE_POSTINGS and POSTING_AMOUNT_MISMATCH: every leg of the unreversed TRADE sets
-- naming the execution (rc03_trade_sets), whichever leg carries the execution_id. Those sets as a
-- constant list the ledger scan is filtered by (as in_key_parts: the set ids are not key parts).
SET VARIABLE rc03_record_sets = (
  SELECT short_list(coalesce(list(DISTINCT t.posting_set_id), []::VARCHAR[])) FROM control_differences d
  JOIN rc03_trade_sets t ON t.execution_id = d.key WHERE d.kind IN ('EXECUTION_MULTIPLE_POSTINGS', 'POSTING_AMOUNT_MISMATCH')
);

SELECT d.kind, d.key, 'ledger' AS side, 'ledger_postings' AS dataset, l._source AS source, l.posting_set_id || '|' || l.leg AS record_key
FROM control_differences d
JOIN rc03_trade_sets t ON t.execution_id = d.key
JOIN ledger_postings l ON l.posting_set_id = t.posting_set_id AND in_short_list(getvariable('rc03_record_sets'), l.posting_set_id)
WHERE d.kind IN ('EXECUTION_MULTIPLE_POSTINGS', 'POSTING_AMOUNT_MISMATCH');

-- BALANCE_ROLLFORWARD_MISMATCH (key account_id|currency): the snapshots at exactly the window start
-- and end, and every posting on the account and currency with effective_at in the window (the net).
SELECT d.kind, d.key, CASE WHEN b.as_of = getvariable('window_start')::TIMESTAMP THEN 'opening' ELSE 'closing' END AS side,
       'account_balances' AS dataset, b._source AS source, b.account_id || '|' || b.currency || '|' || ts_text(b.as_of) AS record_key
FROM control_differences d
JOIN account_balances b ON b.account_id = split_part(d.key, '|', 1) AND b.currency = split_part(d.key, '|', 2)
WHERE d.kind = 'BALANCE_ROLLFORWARD_MISMATCH'
  AND b.as_of IN (getvariable('window_start')::TIMESTAMP, getvariable('window_end')::TIMESTAMP);

SELECT d.kind, d.key, 'ledger' AS side, 'ledger_postings' AS dataset, l._source AS source, l.posting_set_id || '|' || l.leg AS record_key
FROM control_differences d
JOIN ledger_postings l ON l.account_id = split_part(d.key, '|', 1) AND l.currency = split_part(d.key, '|', 2) AND in_key_parts(l.account_id)
WHERE d.kind = 'BALANCE_ROLLFORWARD_MISMATCH' AND in_window(l.effective_at);

-- RESERVATION_MISMATCH (key account_id|currency): the snapshot at exactly the window end, and the
-- state at the end of every reservation of the account and currency (its highest version with
-- updated_at < end, whatever its status: a released one shows why it is not HELD).
SELECT d.kind, d.key, 'snapshot' AS side, 'account_balances' AS dataset, c._source AS source, c.account_id || '|' || c.currency || '|' || ts_text(c.as_of) AS record_key
FROM control_differences d
JOIN rc03_close c ON c.account_id = split_part(d.key, '|', 1) AND c.currency = split_part(d.key, '|', 2)
WHERE d.kind = 'RESERVATION_MISMATCH';

WITH named AS (
  SELECT kind, key, split_part(key, '|', 1) AS account_id, split_part(key, '|', 2) AS currency FROM control_differences WHERE kind = 'RESERVATION_MISMATCH'
), state AS (
  -- Over every version of the reservations with a row on the account and currency, as rc03_held.
  SELECT r.* FROM reservations r
  SEMI JOIN (SELECT x.reservation_id FROM reservations x SEMI JOIN named n ON n.account_id = x.account_id AND n.currency = x.currency) m
    ON m.reservation_id = r.reservation_id
  WHERE r.updated_at < getvariable('window_end')
  QUALIFY row_number() OVER (PARTITION BY r.reservation_id ORDER BY r.version DESC, r.updated_at DESC, r._source) = 1
)
SELECT n.kind, n.key, 'reservation' AS side, 'reservations' AS dataset, s._source AS source, s.reservation_id || '|' || s.version AS record_key
FROM named n JOIN state s ON s.account_id = n.account_id AND s.currency = n.currency;
