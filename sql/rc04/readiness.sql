-- RC04 readiness beyond watermarks (CONTRACT §3): every bank_statements and custodian_positions
-- row whose mapped end lies in (start, end] must have complete = true.
SELECT DISTINCT 'bank statement ' || statement_id || ' (mapped end ' || ts_text(period_end_utc) || ') is not complete' AS reason FROM rc04_statements WHERE NOT complete
UNION
SELECT DISTINCT 'custodian report ' || custodian_id || '|' || account_id || '|' || instrument_id || ' of ' || strftime(business_date, '%Y-%m-%d') || ' is not complete' FROM rc04_custodian WHERE NOT complete
ORDER BY 1;
