-- RC06 differences (CONTRACT §4). One query per kind: a query holds only its own joins.
SELECT 'NOTICE_UNDELIVERED' AS kind, intent_id AS key,
       'no DELIVERED receipt and no approved exception; created ' || ts_text(created_at) || ', age ' || us_text(age_us(created_at)) ||
       ' s > notice SLA ' || getvariable('notice_sla_s') || ' s' AS detail,
       epoch_us(created_at)::VARCHAR AS record_time_us
FROM rc06_state
WHERE delivered_receipts = 0 AND NOT has_exception AND age_us(created_at) > getvariable('notice_sla_s')::BIGINT * 1000000;

SELECT 'NOTICE_RECEIPT_UNKNOWN_INTENT' AS kind, r.receipt_id AS key, 'receipt names intent ' || min(r.intent_id) || ', which is not in the intents extract' AS detail,
       epoch_us(min(r.provider_time_utc))::VARCHAR AS record_time_us
FROM rc06_receipts r ANTI JOIN notification_intents i ON i.intent_id = r.intent_id
GROUP BY r.receipt_id;

SELECT 'NOTICE_DUPLICATE_RECEIPT' AS kind, intent_id AS key, delivered_receipts || ' DELIVERED receipts under distinct receipt_ids' AS detail,
       epoch_us(created_at)::VARCHAR AS record_time_us
FROM rc06_state WHERE delivered_receipts > 1;
