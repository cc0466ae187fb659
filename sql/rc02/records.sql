-- RC02 records behind each difference (docs/records.md). Sides: internal (executions), venue
-- (venue_fills), order (orders). Record keys: execution_id, venue_id|venue_fill_id,
-- order_id|order_version. Ids never hold '|' (CONTRACT §1), so split_part takes a key apart exactly.

-- Kinds keyed by the match key venue_id|venue_fill_id: the executions and venue fills that carry it,
-- in the whole extract (the match is against the other side's whole extract). A missing side has
-- no row, which is the difference.
WITH keyed AS (
  SELECT kind, key, split_part(key, '|', 1) AS venue_id, split_part(key, '|', 2) AS venue_fill_id FROM control_differences
  WHERE kind IN ('FILL_MISSING_INTERNAL', 'FILL_MISSING_VENUE', 'EXECUTION_DUPLICATE', 'FILL_QTY_MISMATCH', 'FILL_PRICE_MISMATCH')
)
SELECT k.kind, k.key, 'internal' AS side, 'executions' AS dataset, e._source AS source, e.execution_id AS record_key
FROM keyed k JOIN executions e ON e.venue_id = k.venue_id AND e.venue_fill_id = k.venue_fill_id AND in_key_parts(e.venue_fill_id);

WITH keyed AS (
  SELECT kind, key, split_part(key, '|', 1) AS venue_id, split_part(key, '|', 2) AS venue_fill_id FROM control_differences
  WHERE kind IN ('FILL_MISSING_INTERNAL', 'FILL_MISSING_VENUE', 'EXECUTION_DUPLICATE', 'FILL_QTY_MISMATCH', 'FILL_PRICE_MISMATCH')
)
SELECT k.kind, k.key, 'venue' AS side, 'venue_fills' AS dataset, v._source AS source, v.venue_id || '|' || v.venue_fill_id AS record_key
FROM keyed k JOIN venue_fills v ON v.venue_id = k.venue_id AND v.venue_fill_id = k.venue_fill_id AND in_key_parts(v.venue_fill_id);

-- EXECUTION_DUPLICATE also names an execution_id delivered with differing rows: every row of it
-- (one of them may carry another venue fill id).
SELECT d.kind, d.key, 'internal' AS side, 'executions' AS dataset, e._source AS source, e.execution_id AS record_key
FROM control_differences d
JOIN executions k ON k.venue_id = split_part(d.key, '|', 1) AND k.venue_fill_id = split_part(d.key, '|', 2) AND in_key_parts(k.venue_fill_id)
JOIN executions e ON e.execution_id = k.execution_id
WHERE d.kind = 'EXECUTION_DUPLICATE';

-- EXECUTION_UNKNOWN_ORDER (key execution_id): the execution's rows, and any rows of the orders they
-- name (an order that exists but was never accepted).
SELECT d.kind, d.key, 'internal' AS side, 'executions' AS dataset, e._source AS source, e.execution_id AS record_key
FROM control_differences d JOIN executions e ON e.execution_id = d.key AND in_key_parts(e.execution_id)
WHERE d.kind = 'EXECUTION_UNKNOWN_ORDER';

-- The orders those executions name, as a constant list the orders scan is filtered by (as
-- in_key_parts: the order ids are not parts of the keys).
SET VARIABLE rc02_unknown_orders = (
  SELECT short_list(coalesce(list(DISTINCT e.order_id), []::VARCHAR[])) FROM control_differences d
  JOIN executions e ON e.execution_id = d.key AND in_key_parts(e.execution_id) WHERE d.kind = 'EXECUTION_UNKNOWN_ORDER'
);

SELECT d.kind, d.key, 'order' AS side, 'orders' AS dataset, o._source AS source, o.order_id || '|' || o.order_version AS record_key
FROM control_differences d
JOIN executions e ON e.execution_id = d.key AND in_key_parts(e.execution_id)
JOIN orders o ON o.order_id = e.order_id AND in_short_list(getvariable('rc02_unknown_orders'), o.order_id)
WHERE d.kind = 'EXECUTION_UNKNOWN_ORDER';

-- ORDER_OVERFILL (key order_id): the order's version log (ordered_qty of its current version) and
-- every execution of the order in the extract (the Σ fill_qty compared).
SELECT d.kind, d.key, 'order' AS side, 'orders' AS dataset, o._source AS source, o.order_id || '|' || o.order_version AS record_key
FROM control_differences d JOIN orders o ON o.order_id = d.key AND in_key_parts(o.order_id)
WHERE d.kind = 'ORDER_OVERFILL';

SELECT d.kind, d.key, 'internal' AS side, 'executions' AS dataset, e._source AS source, e.execution_id AS record_key
FROM control_differences d JOIN executions e ON e.order_id = d.key AND in_key_parts(e.order_id)
WHERE d.kind = 'ORDER_OVERFILL';

-- VENUE_SEQUENCE_GAP (key venue_id|first_missing): the fills in scope on either side of the gap,
-- the highest venue_seq below the first missing number and the lowest above it.
WITH gaps AS (
  SELECT kind, key, split_part(key, '|', 1) AS venue_id, split_part(key, '|', 2)::HUGEINT AS missing FROM control_differences
  WHERE kind = 'VENUE_SEQUENCE_GAP'
), bounds AS (
  SELECT g.kind, g.key, g.venue_id, max(v.venue_seq) FILTER (WHERE v.venue_seq < g.missing) AS below, min(v.venue_seq) FILTER (WHERE v.venue_seq > g.missing) AS above
  FROM gaps g JOIN rc02_venue_fills v ON v.venue_id = g.venue_id GROUP BY ALL
)
SELECT b.kind, b.key, 'venue' AS side, 'venue_fills' AS dataset, v._source AS source, v.venue_id || '|' || v.venue_fill_id AS record_key
FROM bounds b JOIN rc02_venue_fills v ON v.venue_id = b.venue_id AND (v.venue_seq = b.below OR v.venue_seq = b.above);
