-- RC04 records behind each difference (docs/records.md). Sides: statement (bank_statements), line
-- (bank_statement_lines), ledger (ledger_postings), custodian (custodian_positions), position
-- (positions) and execution (executions). Record keys: statement_id, statement_id|line_id,
-- posting_set_id|leg, custodian_id|account_id|instrument_id|business_date,
-- account_id|instrument_id|as_of, execution_id.

-- The in-scope statement rows of the statement named (STATEMENT_ROLLFORWARD_MISMATCH, BANK_CASH_MISMATCH).
SELECT d.kind, d.key, 'statement' AS side, 'bank_statements' AS dataset, s._source AS source, s.statement_id AS record_key
FROM control_differences d JOIN rc04_statements s ON s.statement_id = d.key
WHERE d.kind IN ('STATEMENT_ROLLFORWARD_MISMATCH', 'BANK_CASH_MISMATCH');

-- Its lines (every line of the extract naming it: the Σ lines compared), and the line named by
-- BANK_LINE_UNMATCHED (key statement_id|line_id).
SELECT d.kind, d.key, 'line' AS side, 'bank_statement_lines' AS dataset, l._source AS source, l.statement_id || '|' || l.line_id AS record_key
FROM control_differences d JOIN bank_statement_lines l ON l.statement_id = split_part(d.key, '|', 1)
WHERE d.kind IN ('STATEMENT_ROLLFORWARD_MISMATCH', 'BANK_CASH_MISMATCH')
   OR (d.kind = 'BANK_LINE_UNMATCHED' AND l.line_id = split_part(d.key, '|', 2));

-- BANK_CASH_MISMATCH: the legs on the statement's account and currency with effective_at in its
-- mapped interval (the ledger's DEBIT − CREDIT compared). The statements' accounts as a constant
-- list the ledger scan is filtered by (as in_key_parts: the accounts are not key parts).
SET VARIABLE rc04_cash_accounts = (
  SELECT short_list(coalesce(list(DISTINCT p.account_id), []::VARCHAR[])) FROM control_differences d
  JOIN rc04_periods p ON p.statement_id = d.key WHERE d.kind = 'BANK_CASH_MISMATCH'
);

SELECT d.kind, d.key, 'ledger' AS side, 'ledger_postings' AS dataset, l._source AS source, l.posting_set_id || '|' || l.leg AS record_key
FROM control_differences d
JOIN rc04_periods p ON p.statement_id = d.key
JOIN ledger_postings l ON l.account_id = p.account_id AND l.currency = p.currency AND in_short_list(getvariable('rc04_cash_accounts'), l.account_id)
WHERE d.kind = 'BANK_CASH_MISMATCH' AND l.effective_at >= p.period_start_utc AND l.effective_at < p.period_end_utc;

-- BANK_LINE_UNMATCHED: the legs of the posting set the line references on the statement's account
-- and currency (what it nets); none when the reference is empty or names no set. The references
-- as a constant list the ledger scan is filtered by.
SET VARIABLE rc04_line_references = (
  SELECT short_list(coalesce(list(DISTINCT l.reference), []::VARCHAR[])) FROM control_differences d
  JOIN rc04_lines l ON l.statement_id = split_part(d.key, '|', 1) AND l.line_id = split_part(d.key, '|', 2) WHERE d.kind = 'BANK_LINE_UNMATCHED'
);

SELECT d.kind, d.key, 'ledger' AS side, 'ledger_postings' AS dataset, p._source AS source, p.posting_set_id || '|' || p.leg AS record_key
FROM control_differences d
JOIN rc04_lines l ON l.statement_id = split_part(d.key, '|', 1) AND l.line_id = split_part(d.key, '|', 2)
JOIN ledger_postings p ON p.posting_set_id = l.reference AND p.account_id = l.account_id AND p.currency = l.currency AND in_short_list(getvariable('rc04_line_references'), p.posting_set_id)
WHERE d.kind = 'BANK_LINE_UNMATCHED';

-- LEDGER_CASH_UNMATCHED (key posting_set_id): the set's legs on the statement account and currency
-- inside the mapped interval, and the statement whose lines do not reference it.
WITH unmatched AS (
  SELECT d.kind, d.key, c.statement_id, c.account_id, c.currency, c.period_start_utc, c.period_end_utc
  FROM control_differences d JOIN rc04_ledger_cash c ON c.posting_set_id = d.key
  WHERE d.kind = 'LEDGER_CASH_UNMATCHED'
    AND NOT EXISTS (SELECT 1 FROM bank_statement_lines x WHERE x.statement_id = c.statement_id AND x.reference = c.posting_set_id)
)
SELECT u.kind, u.key, 'ledger' AS side, 'ledger_postings' AS dataset, l._source AS source, l.posting_set_id || '|' || l.leg AS record_key
FROM unmatched u JOIN ledger_postings l ON l.posting_set_id = u.key AND l.account_id = u.account_id AND l.currency = u.currency AND in_key_parts(l.posting_set_id)
WHERE l.effective_at >= u.period_start_utc AND l.effective_at < u.period_end_utc
UNION ALL
SELECT u.kind, u.key, 'statement', 'bank_statements', s._source, s.statement_id
FROM unmatched u JOIN rc04_statements s ON s.statement_id = u.statement_id;

-- STATEMENT_SEQUENCE_GAP (key bank_id|account_id|missing_seq): the statements of that bank and
-- account on either side of the missing number, in the whole extract.
WITH gaps AS (
  SELECT kind, key, split_part(key, '|', 1) AS bank_id, split_part(key, '|', 2) AS account_id, split_part(key, '|', 3)::HUGEINT AS missing
  FROM control_differences WHERE kind = 'STATEMENT_SEQUENCE_GAP'
), bounds AS (
  SELECT g.kind, g.key, g.bank_id, g.account_id,
         max(s.statement_seq) FILTER (WHERE s.statement_seq < g.missing) AS below, min(s.statement_seq) FILTER (WHERE s.statement_seq > g.missing) AS above
  FROM gaps g JOIN bank_statements s ON s.bank_id = g.bank_id AND s.account_id = g.account_id GROUP BY ALL
)
SELECT b.kind, b.key, 'statement' AS side, 'bank_statements' AS dataset, s._source AS source, s.statement_id AS record_key
FROM bounds b JOIN bank_statements s ON s.bank_id = b.bank_id AND s.account_id = b.account_id AND (s.statement_seq = b.below OR s.statement_seq = b.above);

-- CUSTODIAN_POSITION_MISMATCH (key custodian_id|account_id|instrument_id|business_date): the
-- custodian's rows, and the internal figure's records: positions at exactly the window start and
-- the fills of the account and instrument with executed_at in [window start, mapped end).
WITH named AS (
  SELECT d.kind, d.key, c.* FROM control_differences d
  JOIN rc04_custodian c ON c.custodian_id = split_part(d.key, '|', 1) AND c.account_id = split_part(d.key, '|', 2)
   AND c.instrument_id = split_part(d.key, '|', 3) AND strftime(c.business_date, '%Y-%m-%d') = split_part(d.key, '|', 4)
  WHERE d.kind = 'CUSTODIAN_POSITION_MISMATCH'
)
SELECT kind, key, 'custodian' AS side, 'custodian_positions' AS dataset, _source AS source, key AS record_key FROM named
UNION ALL
SELECT DISTINCT n.kind, n.key, 'position', 'positions', p._source, p.account_id || '|' || p.instrument_id || '|' || ts_text(p.as_of)
FROM named n JOIN positions p ON p.account_id = n.account_id AND p.instrument_id = n.instrument_id
WHERE p.as_of = getvariable('window_start')::TIMESTAMP
UNION ALL
SELECT DISTINCT n.kind, n.key, 'execution', 'executions', e._source, e.execution_id
FROM named n JOIN executions e ON e.account_id = n.account_id AND e.instrument_id = n.instrument_id AND in_key_parts(e.account_id)
WHERE e.executed_at >= getvariable('window_start')::TIMESTAMP AND e.executed_at < n.period_end_utc;
