-- RC06 control totals: required intents in scope, delivered, failed (a FAILED or BOUNCED receipt
-- and no delivery), covered by an approved exception, and the oldest undelivered age in seconds.
SELECT 'intent_count' AS name, NULL AS dim, count(*)::VARCHAR AS value FROM rc06_state
UNION ALL SELECT 'delivered_count', NULL, count(*) FILTER (WHERE delivered_receipts > 0)::VARCHAR FROM rc06_state
UNION ALL SELECT 'failed_count', NULL, count(*) FILTER (WHERE delivered_receipts = 0 AND failed_receipts > 0)::VARCHAR FROM rc06_state
UNION ALL SELECT 'exception_count', NULL, count(*) FILTER (WHERE has_exception)::VARCHAR FROM rc06_state
UNION ALL SELECT 'receipt_count_by_status', status, count(*)::VARCHAR FROM rc06_receipts GROUP BY status
UNION ALL SELECT 'oldest_undelivered_age_s', NULL, coalesce(us_text(max(age_us(created_at)) FILTER (WHERE delivered_receipts = 0 AND NOT has_exception)), '0') FROM rc06_state
ORDER BY 1, 2;
