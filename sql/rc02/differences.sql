-- RC02 differences (CONTRACT §4). Match key venue_id|venue_fill_id against the other side's whole
-- extract. One query per kind: a query holds only its own joins, so on a large day no statement
-- keeps several kinds' hash tables at once.

SELECT 'FILL_MISSING_INTERNAL' AS kind, venue_id || '|' || venue_fill_id AS key,
       'venue fill at ' || ts_text(min(venue_time_utc)) || ' has no internal execution' AS detail,
       epoch_us(min(venue_time_utc))::VARCHAR AS record_time_us
FROM rc02_matched WHERE NOT has_e
GROUP BY venue_id, venue_fill_id;

SELECT 'FILL_MISSING_VENUE' AS kind, venue_id || '|' || venue_fill_id AS key,
       'execution ' || string_agg(DISTINCT execution_id, ',' ORDER BY execution_id) || ' has no venue fill' AS detail,
       epoch_us(min(executed_at))::VARCHAR AS record_time_us
FROM rc02_matched WHERE NOT has_v
GROUP BY venue_id, venue_fill_id;

-- EXECUTION_DUPLICATE: keys with several distinct execution_ids (with their list), and keys of an
-- execution_id delivered with differing rows. Distinct (key, execution_id) pairs first, then keys
-- with more than one: plain aggregates, which DuckDB spills (count(DISTINCT) per key ran out of
-- memory at 10M orders); the list is one grouped pass over those keys' executions only.
WITH dup_exec_ids AS (
  SELECT execution_id FROM executions GROUP BY execution_id HAVING count(*) > 1
), dup_keys AS (
  SELECT e.venue_id, e.venue_fill_id, 'distinct execution_ids ' || string_agg(DISTINCT e.execution_id, ',' ORDER BY e.execution_id) AS why
  FROM executions e
  SEMI JOIN (SELECT venue_id, venue_fill_id FROM (SELECT venue_id, venue_fill_id, execution_id FROM executions GROUP BY ALL) GROUP BY venue_id, venue_fill_id HAVING count(*) > 1) m
    ON m.venue_id = e.venue_id AND m.venue_fill_id = e.venue_fill_id
  GROUP BY e.venue_id, e.venue_fill_id
  UNION ALL
  SELECT e.venue_id, e.venue_fill_id, 'execution_id ' || e.execution_id || ' delivered with differing rows'
  FROM executions e SEMI JOIN dup_exec_ids d ON d.execution_id = e.execution_id
)
SELECT 'EXECUTION_DUPLICATE' AS kind, d.venue_id || '|' || d.venue_fill_id AS key, string_agg(DISTINCT d.why, '; ' ORDER BY d.why) AS detail,
       epoch_us(min(e.executed_at))::VARCHAR AS record_time_us
FROM dup_keys d JOIN rc02_executions e USING (venue_id, venue_fill_id)
GROUP BY d.venue_id, d.venue_fill_id;

SELECT 'FILL_QTY_MISMATCH' AS kind, venue_id || '|' || venue_fill_id AS key,
       'internal fill_qty ' || string_agg(DISTINCT dec_text(internal_qty), ',' ORDER BY dec_text(internal_qty)) || ' vs venue ' || string_agg(DISTINCT dec_text(venue_qty), ',' ORDER BY dec_text(venue_qty)) AS detail,
       epoch_us(min(record_time))::VARCHAR AS record_time_us
FROM rc02_matched WHERE has_e AND has_v AND internal_qty <> venue_qty GROUP BY venue_id, venue_fill_id;

SELECT 'FILL_PRICE_MISMATCH' AS kind, venue_id || '|' || venue_fill_id AS key,
       'internal price ' || string_agg(DISTINCT dec_text(internal_price), ',' ORDER BY dec_text(internal_price)) || ' vs venue ' || string_agg(DISTINCT dec_text(venue_price), ',' ORDER BY dec_text(venue_price)) AS detail,
       epoch_us(min(record_time))::VARCHAR AS record_time_us
FROM rc02_matched WHERE has_e AND has_v AND internal_price <> venue_price GROUP BY venue_id, venue_fill_id;

-- Rows of one execution_id may name different orders (also an EXECUTION_DUPLICATE): every unknown
-- one is named, in byte order (only the few executions reported are aggregated).
SELECT 'EXECUTION_UNKNOWN_ORDER' AS kind, e.execution_id AS key,
       CASE WHEN count(DISTINCT e.order_id) = 1 THEN 'order ' || min(e.order_id) || ' has no accepted order in the extract'
            ELSE 'orders ' || string_agg(DISTINCT e.order_id, ', ' ORDER BY e.order_id) || ' have no accepted order in the extract' END AS detail,
       epoch_us(min(e.executed_at))::VARCHAR AS record_time_us
FROM rc02_executions e
SEMI JOIN (SELECT f.order_id FROM rc02_order_fills f ANTI JOIN order_acceptance a ON a.order_id = f.order_id WHERE f.first_in_scope IS NOT NULL) u
  ON u.order_id = e.order_id
GROUP BY e.execution_id;

SELECT 'ORDER_OVERFILL' AS kind, c.order_id AS key,
       'filled ' || dec_text(f.filled_qty) || ' > ordered_qty ' || dec_text(c.ordered_qty) || ' of version ' || c.order_version AS detail,
       epoch_us(f.first_in_scope)::VARCHAR AS record_time_us
FROM order_current c
SEMI JOIN order_acceptance a ON a.order_id = c.order_id
JOIN rc02_order_fills f USING (order_id)
WHERE f.filled_qty > c.ordered_qty AND f.first_in_scope IS NOT NULL;

-- VENUE_SEQUENCE_GAP: lead() over the scoped rows themselves; a repeated venue_seq is followed by
-- itself, which is no gap, so no DISTINCT over (venue, seq) is needed.
SELECT 'VENUE_SEQUENCE_GAP' AS kind, venue_id || '|' || first_missing AS key,
       'venue_seq of fills in scope is not contiguous; first missing ' || first_missing AS detail,
       epoch_us(record_time)::VARCHAR AS record_time_us
FROM (
  SELECT venue_id, min(venue_seq + 1) FILTER (WHERE next_seq > venue_seq + 1) AS first_missing, min(venue_time_utc) AS record_time FROM (
    SELECT venue_id, venue_seq, venue_time_utc, lead(venue_seq) OVER (PARTITION BY venue_id ORDER BY venue_seq) AS next_seq
    FROM rc02_venue_fills
  ) GROUP BY venue_id
) WHERE first_missing IS NOT NULL;
