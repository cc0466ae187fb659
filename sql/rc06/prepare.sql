-- RC06 scope: required intents by created_at, receipts by their mapped UTC time.
CREATE OR REPLACE TEMP TABLE rc06_intents AS
SELECT intent_id, min(created_at) AS created_at FROM notification_intents
WHERE required AND in_window(created_at) GROUP BY intent_id;

CREATE OR REPLACE TEMP TABLE rc06_receipts AS SELECT * FROM notification_receipts WHERE in_window(provider_time_utc);

-- Receipt counts per scoped intent in ONE grouped pass over the receipts, instead of two
-- correlated subqueries per intent. Intents without a receipt count 0.
CREATE OR REPLACE TEMP TABLE rc06_state AS
WITH receipt_counts AS (
  SELECT r.intent_id,
         count(DISTINCT r.receipt_id) FILTER (WHERE r.status = 'DELIVERED') AS delivered_receipts,
         count(*) FILTER (WHERE r.status IN ('FAILED', 'BOUNCED')) AS failed_receipts
  FROM notification_receipts r SEMI JOIN rc06_intents i ON i.intent_id = r.intent_id
  GROUP BY r.intent_id
)
SELECT i.intent_id, i.created_at,
       coalesce(c.delivered_receipts, 0) AS delivered_receipts,
       coalesce(c.failed_receipts, 0) AS failed_receipts,
       EXISTS (SELECT 1 FROM notification_exceptions x WHERE x.intent_id = i.intent_id) AS has_exception
FROM rc06_intents i LEFT JOIN receipt_counts c USING (intent_id);
