-- RC02 differences (CONTRACT §4). Match key venue_id|venue_fill_id against the other side's whole extract.
WITH dup_exec_ids AS (
  SELECT execution_id FROM executions GROUP BY execution_id HAVING count(*) > 1
), multi_keys AS (
  SELECT venue_id, venue_fill_id FROM executions GROUP BY venue_id, venue_fill_id HAVING count(DISTINCT execution_id) > 1
), dup_keys AS (
  -- The list of execution ids is built only for the keys that have several.
  SELECT m.venue_id, m.venue_fill_id,
         'distinct execution_ids ' || (SELECT string_agg(DISTINCT e.execution_id, ',' ORDER BY e.execution_id) FROM executions e
                                       WHERE e.venue_id = m.venue_id AND e.venue_fill_id = m.venue_fill_id) AS why
  FROM multi_keys m
  UNION ALL
  SELECT e.venue_id, e.venue_fill_id, 'execution_id ' || e.execution_id || ' delivered with differing rows'
  FROM executions e SEMI JOIN dup_exec_ids d ON d.execution_id = e.execution_id
), pairs AS (
  SELECT e.venue_id, e.venue_fill_id, e.fill_qty AS internal_qty, v.fill_qty AS venue_qty, e.price AS internal_price, v.price AS venue_price,
         least(e.executed_at, v.venue_time_utc) AS record_time
  FROM executions e JOIN venue_fills v USING (venue_id, venue_fill_id)
  WHERE in_window(e.executed_at) OR in_window(v.venue_time_utc)
), accepted_orders AS (
  SELECT order_id FROM order_acceptance
), order_fills AS (
  SELECT order_id, sum(fill_qty) AS filled_qty FROM executions GROUP BY order_id
), venue_seqs AS (
  SELECT DISTINCT venue_id, venue_seq FROM rc02_venue_fills
), venue_first AS (
  SELECT venue_id, min(venue_time_utc) AS t FROM rc02_venue_fills GROUP BY venue_id
), venue_gaps AS (
  SELECT g.venue_id, min(g.venue_seq + 1) AS first_missing, min(f.t) AS record_time FROM (
    SELECT s.venue_id, s.venue_seq, lead(s.venue_seq) OVER (PARTITION BY s.venue_id ORDER BY s.venue_seq) AS next_seq
    FROM venue_seqs s
  ) g JOIN venue_first f USING (venue_id) WHERE g.next_seq > g.venue_seq + 1 GROUP BY g.venue_id
)
SELECT 'FILL_MISSING_INTERNAL' AS kind, v.venue_id || '|' || v.venue_fill_id AS key,
       'venue fill at ' || ts_text(min(v.venue_time_utc)) || ' has no internal execution' AS detail,
       epoch_us(min(v.venue_time_utc))::VARCHAR AS record_time_us
FROM rc02_venue_fills v ANTI JOIN executions e ON e.venue_id = v.venue_id AND e.venue_fill_id = v.venue_fill_id
GROUP BY v.venue_id, v.venue_fill_id
UNION ALL
SELECT 'FILL_MISSING_VENUE', e.venue_id || '|' || e.venue_fill_id,
       'execution ' || string_agg(DISTINCT e.execution_id, ',' ORDER BY e.execution_id) || ' has no venue fill',
       epoch_us(min(e.executed_at))::VARCHAR
FROM rc02_executions e ANTI JOIN venue_fills v ON v.venue_id = e.venue_id AND v.venue_fill_id = e.venue_fill_id
GROUP BY e.venue_id, e.venue_fill_id
UNION ALL
SELECT 'EXECUTION_DUPLICATE', d.venue_id || '|' || d.venue_fill_id, string_agg(DISTINCT d.why, '; ' ORDER BY d.why),
       epoch_us(min(e.executed_at))::VARCHAR
FROM dup_keys d JOIN rc02_executions e USING (venue_id, venue_fill_id)
GROUP BY d.venue_id, d.venue_fill_id
UNION ALL
SELECT 'FILL_QTY_MISMATCH', venue_id || '|' || venue_fill_id,
       'internal fill_qty ' || string_agg(DISTINCT dec_text(internal_qty), ',') || ' vs venue ' || string_agg(DISTINCT dec_text(venue_qty), ','),
       epoch_us(min(record_time))::VARCHAR
FROM pairs WHERE internal_qty <> venue_qty GROUP BY venue_id, venue_fill_id
UNION ALL
SELECT 'FILL_PRICE_MISMATCH', venue_id || '|' || venue_fill_id,
       'internal price ' || string_agg(DISTINCT dec_text(internal_price), ',') || ' vs venue ' || string_agg(DISTINCT dec_text(venue_price), ','),
       epoch_us(min(record_time))::VARCHAR
FROM pairs WHERE internal_price <> venue_price GROUP BY venue_id, venue_fill_id
UNION ALL
SELECT 'EXECUTION_UNKNOWN_ORDER', e.execution_id, 'order ' || min(e.order_id) || ' has no accepted order in the extract',
       epoch_us(min(e.executed_at))::VARCHAR
FROM rc02_executions e ANTI JOIN accepted_orders a ON a.order_id = e.order_id
GROUP BY e.execution_id
UNION ALL
SELECT 'ORDER_OVERFILL', c.order_id,
       'filled ' || dec_text(f.filled_qty) || ' > ordered_qty ' || dec_text(c.ordered_qty) || ' of version ' || c.order_version,
       epoch_us(min(e.executed_at))::VARCHAR
FROM order_current c
JOIN accepted_orders a USING (order_id)
JOIN order_fills f USING (order_id)
JOIN rc02_executions e USING (order_id)
WHERE f.filled_qty > c.ordered_qty
GROUP BY c.order_id, f.filled_qty, c.ordered_qty, c.order_version
UNION ALL
SELECT 'VENUE_SEQUENCE_GAP', venue_id || '|' || first_missing,
       'venue_seq of fills in scope is not contiguous; first missing ' || first_missing,
       epoch_us(record_time)::VARCHAR
FROM venue_gaps;
