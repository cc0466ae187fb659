-- RC02 differences (CONTRACT §4). Match key venue_id|venue_fill_id against the other side's whole extract.
WITH dup_exec_ids AS (
  SELECT execution_id FROM executions GROUP BY execution_id HAVING count(*) > 1
), dup_keys AS (
  -- Keys with several distinct execution_ids, with their list: one grouped pass over those keys'
  -- executions instead of a correlated subquery per key.
  SELECT e.venue_id, e.venue_fill_id, 'distinct execution_ids ' || string_agg(DISTINCT e.execution_id, ',' ORDER BY e.execution_id) AS why
  FROM executions e
  -- Distinct (key, execution_id) pairs first, then keys with more than one: plain aggregates,
  -- which DuckDB spills (count(DISTINCT) per key ran out of memory at 10M orders).
  SEMI JOIN (SELECT venue_id, venue_fill_id FROM (SELECT venue_id, venue_fill_id, execution_id FROM executions GROUP BY ALL) GROUP BY venue_id, venue_fill_id HAVING count(*) > 1) m
    ON m.venue_id = e.venue_id AND m.venue_fill_id = e.venue_fill_id
  GROUP BY e.venue_id, e.venue_fill_id
  UNION ALL
  SELECT e.venue_id, e.venue_fill_id, 'execution_id ' || e.execution_id || ' delivered with differing rows'
  FROM executions e SEMI JOIN dup_exec_ids d ON d.execution_id = e.execution_id
), pairs AS (
  SELECT * FROM rc02_matched WHERE has_e AND has_v
), unknown_orders AS (
  SELECT f.order_id FROM rc02_order_fills f ANTI JOIN order_acceptance a ON a.order_id = f.order_id WHERE f.first_in_scope IS NOT NULL
), venue_gaps AS (
  -- lead() over the scoped rows themselves: a repeated venue_seq is followed by itself, which is
  -- no gap, so the DISTINCT over (venue, seq) the window used to read is not needed.
  SELECT venue_id, min(venue_seq + 1) FILTER (WHERE next_seq > venue_seq + 1) AS first_missing, min(venue_time_utc) AS record_time FROM (
    SELECT venue_id, venue_seq, venue_time_utc, lead(venue_seq) OVER (PARTITION BY venue_id ORDER BY venue_seq) AS next_seq
    FROM rc02_venue_fills
  ) GROUP BY venue_id
)
SELECT 'FILL_MISSING_INTERNAL' AS kind, venue_id || '|' || venue_fill_id AS key,
       'venue fill at ' || ts_text(min(venue_time_utc)) || ' has no internal execution' AS detail,
       epoch_us(min(venue_time_utc))::VARCHAR AS record_time_us
FROM rc02_matched WHERE NOT has_e
GROUP BY venue_id, venue_fill_id
UNION ALL
SELECT 'FILL_MISSING_VENUE', venue_id || '|' || venue_fill_id,
       'execution ' || string_agg(DISTINCT execution_id, ',' ORDER BY execution_id) || ' has no venue fill',
       epoch_us(min(executed_at))::VARCHAR
FROM rc02_matched WHERE NOT has_v
GROUP BY venue_id, venue_fill_id
UNION ALL
SELECT 'EXECUTION_DUPLICATE', d.venue_id || '|' || d.venue_fill_id, string_agg(DISTINCT d.why, '; ' ORDER BY d.why),
       epoch_us(min(e.executed_at))::VARCHAR
FROM dup_keys d JOIN rc02_executions e USING (venue_id, venue_fill_id)
GROUP BY d.venue_id, d.venue_fill_id
UNION ALL
SELECT 'FILL_QTY_MISMATCH', venue_id || '|' || venue_fill_id,
       'internal fill_qty ' || string_agg(DISTINCT dec_text(internal_qty), ',' ORDER BY dec_text(internal_qty)) || ' vs venue ' || string_agg(DISTINCT dec_text(venue_qty), ',' ORDER BY dec_text(venue_qty)),
       epoch_us(min(record_time))::VARCHAR
FROM pairs WHERE internal_qty <> venue_qty GROUP BY venue_id, venue_fill_id
UNION ALL
SELECT 'FILL_PRICE_MISMATCH', venue_id || '|' || venue_fill_id,
       'internal price ' || string_agg(DISTINCT dec_text(internal_price), ',' ORDER BY dec_text(internal_price)) || ' vs venue ' || string_agg(DISTINCT dec_text(venue_price), ',' ORDER BY dec_text(venue_price)),
       epoch_us(min(record_time))::VARCHAR
FROM pairs WHERE internal_price <> venue_price GROUP BY venue_id, venue_fill_id
UNION ALL
SELECT 'EXECUTION_UNKNOWN_ORDER', e.execution_id, 'order ' || min(e.order_id) || ' has no accepted order in the extract',
       epoch_us(min(e.executed_at))::VARCHAR
FROM rc02_executions e SEMI JOIN unknown_orders u ON u.order_id = e.order_id
GROUP BY e.execution_id
UNION ALL
SELECT 'ORDER_OVERFILL', c.order_id,
       'filled ' || dec_text(f.filled_qty) || ' > ordered_qty ' || dec_text(c.ordered_qty) || ' of version ' || c.order_version,
       epoch_us(f.first_in_scope)::VARCHAR
FROM order_current c
SEMI JOIN order_acceptance a ON a.order_id = c.order_id
JOIN rc02_order_fills f USING (order_id)
WHERE f.filled_qty > c.ordered_qty AND f.first_in_scope IS NOT NULL
UNION ALL
SELECT 'VENUE_SEQUENCE_GAP', venue_id || '|' || first_missing,
       'venue_seq of fills in scope is not contiguous; first missing ' || first_missing,
       epoch_us(record_time)::VARCHAR
FROM venue_gaps WHERE first_missing IS NOT NULL;
