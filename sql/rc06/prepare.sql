-- RC06 scope: required intents by created_at, receipts by their mapped UTC time.
CREATE OR REPLACE TEMP TABLE rc06_intents AS
SELECT intent_id, min(created_at) AS created_at FROM notification_intents
WHERE required AND in_window(created_at) GROUP BY intent_id;

-- A view: its three readers (totals, NOTICE_RECEIPT_UNKNOWN_INTENT, records) each scan the receipts
-- table with the filter for the columns they need, cheaper than copying every column once.
CREATE OR REPLACE TEMP VIEW rc06_receipts AS SELECT * FROM notification_receipts WHERE in_window(provider_time_utc);

-- Receipt counts per intent in ONE grouped pass over the receipts, instead of two correlated
-- subqueries per intent, joined to the scoped intents (grouping every receipt costs less than
-- semi-joining them with the scope first). Intents without a receipt count 0.
CREATE OR REPLACE TEMP TABLE rc06_state AS
WITH per_receipt AS (
  -- Per (intent, receipt_id) first, then per intent: plain aggregates, which DuckDB spills
  -- (count(DISTINCT) per intent is not safe past the memory limit on a large day).
  SELECT r.intent_id, r.receipt_id,
         bool_or(r.status = 'DELIVERED') AS delivered,
         count(*) FILTER (WHERE r.status IN ('FAILED', 'BOUNCED')) AS failed
  FROM notification_receipts r
  GROUP BY r.intent_id, r.receipt_id
), receipt_counts AS (
  SELECT intent_id, count(*) FILTER (WHERE delivered) AS delivered_receipts, sum(failed) AS failed_receipts
  FROM per_receipt GROUP BY intent_id
)
SELECT i.intent_id, i.created_at,
       coalesce(c.delivered_receipts, 0) AS delivered_receipts,
       coalesce(c.failed_receipts, 0) AS failed_receipts,
       EXISTS (SELECT 1 FROM notification_exceptions x WHERE x.intent_id = i.intent_id) AS has_exception
FROM rc06_intents i LEFT JOIN receipt_counts c USING (intent_id);
