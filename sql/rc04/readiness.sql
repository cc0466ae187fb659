-- RC04 readiness beyond watermarks (CONTRACT §3): every statement and custodian report whose
-- mapped end lies in (start, end] must be complete.
SELECT 'bank statement ' || statement_id || ' is not complete' AS reason FROM rc04_statements WHERE NOT complete
UNION ALL
SELECT DISTINCT 'custodian report ' || custodian_id || '|' || account_id || ' of ' || business_date || ' is not complete' FROM rc04_custodian WHERE NOT complete
ORDER BY 1;
