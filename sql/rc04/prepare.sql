-- RC04 scope: statements (and custodian reports) whose mapped UTC end lies in (start, end].
-- period_start_utc / period_end_utc were mapped at load from business_date, timezone and cutoff.
CREATE OR REPLACE TEMP TABLE rc04_statements AS
SELECT * FROM bank_statements
WHERE period_end_utc > getvariable('window_start')::TIMESTAMP AND period_end_utc <= getvariable('window_end')::TIMESTAMP;

CREATE OR REPLACE TEMP TABLE rc04_custodian AS
SELECT * FROM custodian_positions
WHERE period_end_utc > getvariable('window_start')::TIMESTAMP AND period_end_utc <= getvariable('window_end')::TIMESTAMP;

CREATE OR REPLACE TEMP TABLE rc04_lines AS
SELECT l.*, s.account_id, s.currency, s.period_start_utc, s.period_end_utc
FROM bank_statement_lines l JOIN rc04_statements s USING (statement_id);

-- Ledger cash on each scoped statement's account and currency inside its mapped interval,
-- in the bank's view: DEBIT − CREDIT (money in is a DEBIT on the asset account).
CREATE OR REPLACE TEMP TABLE rc04_ledger_cash AS
SELECT s.statement_id, l.posting_set_id,
       sum(CASE l.direction WHEN 'DEBIT' THEN l.amount_minor ELSE -l.amount_minor END)::DECIMAL(38,0) AS cash_minor,
       min(l.effective_at) AS effective_at
FROM rc04_statements s
JOIN ledger_postings l ON l.account_id = s.account_id AND l.currency = s.currency
  AND l.effective_at >= s.period_start_utc AND l.effective_at < s.period_end_utc
GROUP BY s.statement_id, l.posting_set_id;
