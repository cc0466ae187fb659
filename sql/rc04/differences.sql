-- RC04 differences (CONTRACT §4), one row per (kind, key). Signs are the bank's view of our cash:
-- +X is money in, which the ledger books as a DEBIT on the statement account, so statements
-- compare with DEBIT − CREDIT. Every check runs per record; the final GROUP BY merges records
-- that share a key (two differing rows of one statement, custodian report or line) into one
-- difference whose detail lists each finding.
WITH ledger_sum AS (
  SELECT statement_id, account_id, currency, period_start_utc, period_end_utc, minor(sum(cash_minor)) AS ledger_minor
  FROM rc04_ledger_cash GROUP BY ALL
), ref_legs AS (
  -- Legs of the posting sets the lines reference, netted per set, account and currency in one
  -- grouped pass (the ledger is probed once, not twice per line by correlated subqueries).
  SELECT p.posting_set_id, p.account_id, p.currency,
         sum(CASE p.direction WHEN 'DEBIT' THEN p.amount_minor ELSE -p.amount_minor END) AS net_minor
  FROM ledger_postings p SEMI JOIN rc04_lines l ON l.reference = p.posting_set_id
  GROUP BY p.posting_set_id, p.account_id, p.currency
), line_match AS (
  SELECT l.*,
         EXISTS (SELECT 1 FROM ref_legs r WHERE r.posting_set_id = l.reference) AS set_exists,
         minor(coalesce(r.net_minor, 0)) AS set_net_minor
  FROM rc04_lines l
  LEFT JOIN ref_legs r ON r.posting_set_id = l.reference AND r.account_id = l.account_id AND r.currency = l.currency
), seqs AS (
  SELECT DISTINCT s.bank_id, s.account_id, s.statement_seq, s.period_end_utc,
         (SELECT max(p.statement_seq) FROM bank_statements p
          WHERE p.bank_id = s.bank_id AND p.account_id = s.account_id AND p.statement_seq < s.statement_seq) AS previous_seq
  FROM rc04_statements s
), found AS (
  SELECT 'STATEMENT_ROLLFORWARD_MISMATCH' AS kind, s.statement_id AS key,
         'opening ' || s.opening_balance_minor || ' + lines ' || ls.lines_minor || ' ≠ closing ' || s.closing_balance_minor AS detail,
         s.period_end_utc AS record_time
  FROM rc04_statements s JOIN rc04_line_sums ls USING (statement_id)
  WHERE s.opening_balance_minor + ls.lines_minor <> s.closing_balance_minor
  UNION ALL
  SELECT 'BANK_CASH_MISMATCH', p.statement_id,
         'lines ' || ls.lines_minor || ' ≠ ledger DEBIT − CREDIT ' || coalesce(g.ledger_minor, 0) || ' on ' || p.account_id || ' ' || p.currency ||
         ' in [' || ts_text(p.period_start_utc) || ', ' || ts_text(p.period_end_utc) || ')',
         p.period_end_utc
  FROM rc04_periods p JOIN rc04_line_sums ls USING (statement_id)
  LEFT JOIN ledger_sum g USING (statement_id, account_id, currency, period_start_utc, period_end_utc)
  WHERE ls.lines_minor <> coalesce(g.ledger_minor, 0)
  UNION ALL
  SELECT 'BANK_LINE_UNMATCHED', statement_id || '|' || line_id,
         CASE WHEN reference IS NULL THEN 'line ' || amount_minor || ' has no reference'
              WHEN NOT set_exists THEN 'line ' || amount_minor || ' references ' || reference || ', which is no posting set in the ledger extract'
              ELSE 'posting set ' || reference || ' nets ' || set_net_minor || ' (DEBIT − CREDIT on ' || account_id || ' ' || currency || ') ≠ line ' || amount_minor END,
         period_end_utc
  FROM line_match
  WHERE reference IS NULL OR NOT set_exists OR set_net_minor <> amount_minor
  UNION ALL
  SELECT 'LEDGER_CASH_UNMATCHED', c.posting_set_id,
         'posting set nets ' || c.cash_minor || ' on ' || c.account_id || ' ' || c.currency || ' within statement ' || c.statement_id || ', and no line of that statement references it',
         c.effective_at
  FROM rc04_ledger_cash c
  WHERE NOT EXISTS (SELECT 1 FROM bank_statement_lines l WHERE l.statement_id = c.statement_id AND l.reference = c.posting_set_id)
  UNION ALL
  SELECT 'STATEMENT_SEQUENCE_GAP', bank_id || '|' || account_id || '|' || missing_seq,
         'statement_seq ' || statement_seq || ' follows ' || previous_seq || '; ' || missing_seq || ' is missing' ||
       CASE WHEN statement_seq::HUGEINT - previous_seq::HUGEINT - 1 > 10000 THEN ' (a gap of ' || (statement_seq::HUGEINT - previous_seq::HUGEINT - 1) || ' numbers; the first 10000 are listed)' ELSE '' END,
         period_end_utc
  FROM (SELECT *, unnest(range(previous_seq + 1, CASE WHEN statement_seq::HUGEINT - previous_seq::HUGEINT > 10001 THEN previous_seq + 10001 ELSE statement_seq END)) AS missing_seq FROM seqs WHERE statement_seq::HUGEINT > previous_seq::HUGEINT + 1)
  UNION ALL
  SELECT 'CUSTODIAN_POSITION_MISMATCH', custodian_id || '|' || account_id || '|' || instrument_id || '|' || strftime(business_date, '%Y-%m-%d'),
         'custodian ' || dec_text(quantity) || ' ≠ internal ' || dec_text(internal_qty),
         period_end_utc
  FROM rc04_custodian_internal WHERE quantity <> internal_qty
)
SELECT kind, key, string_agg(DISTINCT detail, '; ' ORDER BY detail) AS detail, epoch_us(min(record_time))::VARCHAR AS record_time_us
FROM found
GROUP BY kind, key;
