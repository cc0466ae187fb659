-- RC04 scope (CONTRACT §4): statements and custodian reports whose mapped UTC end lies in
-- (start, end]. period_start_utc / period_end_utc were mapped at load from business_date,
-- timezone and cutoff_local by the cutoff rule of §2 (pipeline/local-time.ts mapCutoff).
CREATE OR REPLACE TEMP TABLE rc04_statements AS
SELECT * FROM bank_statements
WHERE period_end_utc > getvariable('window_start')::TIMESTAMP AND period_end_utc <= getvariable('window_end')::TIMESTAMP;

CREATE OR REPLACE TEMP TABLE rc04_custodian AS
SELECT * FROM custodian_positions
WHERE period_end_utc > getvariable('window_start')::TIMESTAMP AND period_end_utc <= getvariable('window_end')::TIMESTAMP;

-- Σ lines per in-scope statement_id over every line of the extract. Lines name their statement by
-- id alone, so they are summed once per id even when the extract holds two differing rows of one
-- statement (each row is then checked against the same lines).
CREATE OR REPLACE TEMP TABLE rc04_line_sums AS
SELECT s.statement_id, minor(coalesce(sum(l.amount_minor), 0)) AS lines_minor, count(l.line_id) AS line_count
FROM (SELECT DISTINCT statement_id FROM rc04_statements) s LEFT JOIN bank_statement_lines l USING (statement_id)
GROUP BY s.statement_id;

-- Each distinct (statement, account, currency, mapped interval) an in-scope statement row declares.
-- One per statement in a well-formed extract.
CREATE OR REPLACE TEMP TABLE rc04_periods AS
SELECT DISTINCT statement_id, account_id, currency, period_start_utc, period_end_utc FROM rc04_statements;

-- Lines of in-scope statements, with the account and currency of their statement.
CREATE OR REPLACE TEMP TABLE rc04_lines AS
SELECT l.statement_id, l.line_id, l.amount_minor, l.reference, s.account_id, s.currency, s.period_end_utc
FROM bank_statement_lines l
JOIN (SELECT statement_id, account_id, currency, min(period_end_utc) AS period_end_utc FROM rc04_periods GROUP BY ALL) s USING (statement_id);

-- Ledger cash per posting set on each period's account and currency with effective_at in its
-- mapped interval [period_start_utc, period_end_utc), in the bank's view: DEBIT − CREDIT (money
-- in is a DEBIT on the statement account, an asset).
CREATE OR REPLACE TEMP TABLE rc04_ledger_cash AS
SELECT s.statement_id, s.account_id, s.currency, s.period_start_utc, s.period_end_utc, l.posting_set_id,
       minor(sum(CASE l.direction WHEN 'DEBIT' THEN l.amount_minor ELSE -l.amount_minor END)) AS cash_minor,
       min(l.effective_at) AS effective_at
FROM rc04_periods s
JOIN ledger_postings l ON l.account_id = s.account_id AND l.currency = s.currency
  AND l.effective_at >= s.period_start_utc AND l.effective_at < s.period_end_utc
GROUP BY ALL;

-- Internal trade-date quantity behind each custodian row: positions at exactly the window start
-- (0 if absent) + Σ signed fills (BUY +, SELL −) with executed_at in [window start, mapped end).
CREATE OR REPLACE TEMP TABLE rc04_custodian_internal AS
SELECT c.custodian_id, c.account_id, c.instrument_id, c.business_date, c.period_end_utc, c.quantity,
       coalesce((SELECT sum(p.quantity) FROM positions p
                 WHERE p.as_of = getvariable('window_start')::TIMESTAMP AND p.account_id = c.account_id AND p.instrument_id = c.instrument_id), 0)
       + coalesce((SELECT sum(signed_side(e.side, e.fill_qty)) FROM executions e
                   WHERE e.account_id = c.account_id AND e.instrument_id = c.instrument_id
                     AND e.executed_at >= getvariable('window_start')::TIMESTAMP AND e.executed_at < c.period_end_utc), 0) AS internal_qty
FROM rc04_custodian c;
