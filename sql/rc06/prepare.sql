-- RC06 scope: required intents by created_at, receipts by their mapped UTC time.
CREATE OR REPLACE TEMP TABLE rc06_intents AS
SELECT intent_id, min(created_at) AS created_at FROM notification_intents
WHERE required AND in_window(created_at) GROUP BY intent_id;

CREATE OR REPLACE TEMP TABLE rc06_receipts AS SELECT * FROM notification_receipts WHERE in_window(provider_time_utc);

CREATE OR REPLACE TEMP TABLE rc06_state AS
SELECT i.intent_id, i.created_at,
       (SELECT count(DISTINCT r.receipt_id) FROM notification_receipts r WHERE r.intent_id = i.intent_id AND r.status = 'DELIVERED') AS delivered_receipts,
       (SELECT count(*) FROM notification_receipts r WHERE r.intent_id = i.intent_id AND r.status IN ('FAILED', 'BOUNCED')) AS failed_receipts,
       EXISTS (SELECT 1 FROM notification_exceptions x WHERE x.intent_id = i.intent_id) AS has_exception
FROM rc06_intents i;
