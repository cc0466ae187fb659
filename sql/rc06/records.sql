-- RC06 records behind each difference (docs/records.md). Sides: intent (notification_intents) and
-- receipt (notification_receipts). Record keys: intent_id, receipt_id.

-- NOTICE_UNDELIVERED and NOTICE_DUPLICATE_RECEIPT (key intent_id): the intent's required rows in
-- scope, and its receipts in the extract (any channel, any time: none DELIVERED for the first,
-- the DELIVERED ones under several receipt ids for the second).
SELECT d.kind, d.key, 'intent' AS side, 'notification_intents' AS dataset, i._source AS source, i.intent_id AS record_key
FROM control_differences d JOIN notification_intents i ON i.intent_id = d.key AND in_key_parts(i.intent_id)
WHERE d.kind IN ('NOTICE_UNDELIVERED', 'NOTICE_DUPLICATE_RECEIPT') AND i.required AND in_window(i.created_at);

SELECT d.kind, d.key, 'receipt' AS side, 'notification_receipts' AS dataset, r._source AS source, r.receipt_id AS record_key
FROM control_differences d JOIN notification_receipts r ON r.intent_id = d.key AND in_key_parts(r.intent_id)
WHERE d.kind = 'NOTICE_UNDELIVERED' OR (d.kind = 'NOTICE_DUPLICATE_RECEIPT' AND r.status = 'DELIVERED');

-- NOTICE_RECEIPT_UNKNOWN_INTENT (key receipt_id): the receipt's rows in scope.
SELECT d.kind, d.key, 'receipt' AS side, 'notification_receipts' AS dataset, r._source AS source, r.receipt_id AS record_key
FROM control_differences d JOIN rc06_receipts r ON r.receipt_id = d.key AND in_key_parts(r.receipt_id)
WHERE d.kind = 'NOTICE_RECEIPT_UNKNOWN_INTENT';
