-- RC01 differences (CONTRACT §4): one row per (kind, key). One query per kind: a query holds only
-- its own joins, so on a large day no statement keeps several kinds' hash tables at once.

-- ORDER_VERSION_GAP. Distinct versions = rows − the extra rows of versions held by several rows,
-- from the per-order summary (common/views.sql), not another pass over orders. The list of
-- versions present (distinct, sorted as text) is built only for the orders with a gap.
WITH gaps AS (
  SELECT v.order_id, v.row_count - coalesce(x.extra, 0) AS n, v.lo, v.hi
  FROM order_versions v SEMI JOIN rc01_scope s ON s.order_id = v.order_id
  LEFT JOIN (SELECT order_id, sum(row_count - 1) AS extra FROM order_version_conflicts GROUP BY order_id) x USING (order_id)
  WHERE v.lo <> 1 OR v.row_count - coalesce(x.extra, 0) <> v.hi
), present AS (
  SELECT o.order_id, string_agg(DISTINCT o.order_version::VARCHAR, ',' ORDER BY o.order_version::VARCHAR) AS present
  FROM orders o SEMI JOIN gaps g ON g.order_id = o.order_id GROUP BY o.order_id
)
SELECT 'ORDER_VERSION_GAP' AS kind, g.order_id AS key,
       'versions present ' || p.present || '; expected exactly 1..' || g.hi AS detail,
       epoch_us(s.accepted_at)::VARCHAR AS record_time_us
FROM gaps g JOIN present p USING (order_id) JOIN rc01_scope s USING (order_id);

SELECT 'ORDER_VERSION_CONFLICT' AS kind, c.order_id || '|' || c.order_version AS key,
       c.row_count || ' rows of version ' || c.order_version || ' differ in a column other than ingested_at' AS detail,
       epoch_us(s.accepted_at)::VARCHAR AS record_time_us
FROM order_version_conflicts c JOIN rc01_scope s USING (order_id);

SELECT 'ACCEPTED_WITHOUT_ROUTE' AS kind, c.order_id AS key,
       'current status ACCEPTED at version ' || c.order_version || '; accepted ' || ts_text(c.first_accepted_at) ||
       ', age ' || us_text(age_us(c.first_accepted_at)) || ' s > route SLA ' || getvariable('route_sla_s') || ' s' AS detail,
       epoch_us(c.first_accepted_at)::VARCHAR AS record_time_us
FROM rc01_current c
WHERE c.status = 'ACCEPTED' AND age_us(c.first_accepted_at) > getvariable('route_sla_s')::BIGINT * 1000000;

SELECT 'OUTBOX_UNPUBLISHED' AS kind, s.order_id AS key,
       'no SENT outbox event; accepted ' || ts_text(s.accepted_at) || ', age ' || us_text(age_us(s.accepted_at)) ||
       ' s > route SLA ' || getvariable('route_sla_s') || ' s' AS detail,
       epoch_us(s.accepted_at)::VARCHAR AS record_time_us
FROM rc01_scope s
ANTI JOIN (SELECT aggregate_id FROM outbox_events WHERE publish_status = 'SENT') sent ON sent.aggregate_id = s.order_id
WHERE age_us(s.accepted_at) > getvariable('route_sla_s')::BIGINT * 1000000;

SELECT 'ORDER_FILL_STATE_MISMATCH' AS kind, c.order_id AS key,
       'status ' || c.status || ', ordered_qty ' || dec_text(c.ordered_qty) || ', filled ' || dec_text(coalesce(f.filled_qty, 0::DECIMAL(38,18))) AS detail,
       epoch_us(c.first_accepted_at)::VARCHAR AS record_time_us
FROM rc01_current c LEFT JOIN rc01_filled f USING (order_id)
WHERE (c.status = 'FILLED' AND coalesce(f.filled_qty, 0) <> c.ordered_qty)
   OR (c.status = 'PARTIALLY_FILLED' AND NOT (coalesce(f.filled_qty, 0) > 0 AND coalesce(f.filled_qty, 0) < c.ordered_qty))
   OR (c.status IN ('ACCEPTED', 'ROUTED', 'REJECTED') AND coalesce(f.filled_qty, 0) > 0);
