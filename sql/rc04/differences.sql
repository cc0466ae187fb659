-- RC04 differences (CONTRACT §4). Signs are the bank's view of our cash: +X is money in, which the
-- ledger books as a DEBIT on the statement account, so statements compare with DEBIT − CREDIT.
WITH line_sum AS (
  SELECT s.statement_id, coalesce(sum(l.amount_minor), 0)::DECIMAL(38,0) AS lines_minor
  FROM rc04_statements s LEFT JOIN bank_statement_lines l USING (statement_id) GROUP BY s.statement_id
), ledger_sum AS (
  SELECT statement_id, coalesce(sum(cash_minor), 0)::DECIMAL(38,0) AS ledger_minor FROM rc04_ledger_cash GROUP BY statement_id
), line_match AS (
  SELECT l.statement_id, l.line_id, l.reference, l.amount_minor, l.period_end_utc,
         (SELECT sum(CASE p.direction WHEN 'DEBIT' THEN p.amount_minor ELSE -p.amount_minor END)::DECIMAL(38,0)
          FROM ledger_postings p WHERE p.posting_set_id = l.reference AND p.account_id = l.account_id AND p.currency = l.currency) AS set_net_minor
  FROM rc04_lines l
), seqs AS (
  SELECT DISTINCT s.bank_id, s.account_id, s.statement_seq, s.period_end_utc,
         (SELECT max(p.statement_seq) FROM bank_statements p
          WHERE p.bank_id = s.bank_id AND p.account_id = s.account_id AND p.statement_seq < s.statement_seq) AS previous_seq
  FROM rc04_statements s
), custodian AS (
  SELECT c.custodian_id, c.account_id, c.instrument_id, c.business_date, c.period_end_utc, c.quantity,
         coalesce((SELECT sum(p.quantity) FROM positions p WHERE p.as_of = getvariable('window_start')::TIMESTAMP AND p.account_id = c.account_id AND p.instrument_id = c.instrument_id), 0)
           + coalesce((SELECT sum(signed_side(e.side, e.fill_qty)) FROM executions e WHERE e.account_id = c.account_id AND e.instrument_id = c.instrument_id
                        AND e.executed_at >= getvariable('window_start')::TIMESTAMP AND e.executed_at < c.period_end_utc), 0) AS internal_qty
  FROM rc04_custodian c
)
SELECT 'STATEMENT_ROLLFORWARD_MISMATCH' AS kind, s.statement_id AS key,
       'opening ' || s.opening_balance_minor || ' + lines ' || ls.lines_minor || ' ≠ closing ' || s.closing_balance_minor AS detail,
       epoch_us(s.period_end_utc)::VARCHAR AS record_time_us
FROM rc04_statements s JOIN line_sum ls USING (statement_id)
WHERE s.opening_balance_minor + ls.lines_minor <> s.closing_balance_minor
UNION ALL
SELECT 'BANK_CASH_MISMATCH', s.statement_id,
       'lines ' || ls.lines_minor || ' ≠ ledger DEBIT − CREDIT ' || coalesce(g.ledger_minor, 0) || ' on ' || s.account_id || ' ' || s.currency ||
       ' in [' || ts_text(s.period_start_utc) || ', ' || ts_text(s.period_end_utc) || ')',
       epoch_us(s.period_end_utc)::VARCHAR
FROM rc04_statements s JOIN line_sum ls USING (statement_id) LEFT JOIN ledger_sum g USING (statement_id)
WHERE ls.lines_minor <> coalesce(g.ledger_minor, 0)
UNION ALL
SELECT 'BANK_LINE_UNMATCHED', statement_id || '|' || line_id,
       CASE WHEN reference IS NULL THEN 'line ' || amount_minor || ' has no reference'
            WHEN set_net_minor IS NULL THEN 'reference ' || reference || ' names no posting set on the statement account and currency'
            ELSE 'posting set ' || reference || ' nets ' || set_net_minor || ' ≠ line ' || amount_minor END,
       epoch_us(period_end_utc)::VARCHAR
FROM line_match
WHERE reference IS NULL OR set_net_minor IS NULL OR set_net_minor <> amount_minor
UNION ALL
SELECT 'LEDGER_CASH_UNMATCHED', c.posting_set_id,
       string_agg('posting set nets ' || c.cash_minor || ' on the account and currency of statement ' || c.statement_id || '; no line of it references the set', '; ' ORDER BY c.statement_id),
       epoch_us(min(c.effective_at))::VARCHAR
FROM rc04_ledger_cash c
WHERE NOT EXISTS (SELECT 1 FROM bank_statement_lines l WHERE l.statement_id = c.statement_id AND l.reference = c.posting_set_id)
GROUP BY c.posting_set_id
UNION ALL
SELECT 'STATEMENT_SEQUENCE_GAP', bank_id || '|' || account_id || '|' || missing_seq,
       'statement_seq ' || statement_seq || ' follows ' || previous_seq || '; ' || missing_seq || ' is missing',
       epoch_us(period_end_utc)::VARCHAR
FROM (SELECT bank_id, account_id, missing_seq, min(statement_seq) AS statement_seq, min(previous_seq) AS previous_seq, min(period_end_utc) AS period_end_utc
      FROM (SELECT *, unnest(range(previous_seq + 1, statement_seq)) AS missing_seq FROM seqs WHERE statement_seq > previous_seq + 1)
      GROUP BY bank_id, account_id, missing_seq)
UNION ALL
SELECT 'CUSTODIAN_POSITION_MISMATCH', custodian_id || '|' || account_id || '|' || instrument_id || '|' || strftime(business_date, '%Y-%m-%d'),
       'custodian ' || dec_text(quantity) || ' ≠ internal ' || dec_text(internal_qty),
       epoch_us(period_end_utc)::VARCHAR
FROM custodian WHERE quantity <> internal_qty;
