-- RC01 differences (CONTRACT §4): one row per (kind, key).
WITH version_stats AS (
  SELECT o.order_id, count(DISTINCT o.order_version) AS n, min(o.order_version) AS lo, max(o.order_version) AS hi
  FROM orders o SEMI JOIN rc01_scope s ON s.order_id = o.order_id
  GROUP BY o.order_id
), versions AS (
  -- The list of versions present is built only for the orders with a gap.
  SELECT v.order_id, v.n, v.lo, v.hi,
         (SELECT string_agg(DISTINCT o.order_version::VARCHAR, ',' ORDER BY o.order_version::VARCHAR) FROM orders o WHERE o.order_id = v.order_id) AS present
  FROM version_stats v WHERE v.lo <> 1 OR v.n <> v.hi
), conflicts AS (
  SELECT o.order_id, o.order_version, count(*) AS n
  FROM orders o SEMI JOIN rc01_scope s ON s.order_id = o.order_id
  GROUP BY o.order_id, o.order_version HAVING count(*) > 1
), sent AS (
  SELECT DISTINCT aggregate_id AS order_id FROM outbox_events WHERE publish_status = 'SENT'
)
SELECT 'ORDER_VERSION_GAP' AS kind, v.order_id AS key,
       'versions present ' || v.present || '; expected exactly 1..' || v.hi AS detail,
       epoch_us(s.accepted_at)::VARCHAR AS record_time_us
FROM versions v JOIN rc01_scope s USING (order_id)
WHERE v.lo <> 1 OR v.n <> v.hi
UNION ALL
SELECT 'ORDER_VERSION_CONFLICT', c.order_id || '|' || c.order_version,
       c.n || ' rows of version ' || c.order_version || ' differ in a column other than ingested_at',
       epoch_us(s.accepted_at)::VARCHAR
FROM conflicts c JOIN rc01_scope s USING (order_id)
UNION ALL
SELECT 'ACCEPTED_WITHOUT_ROUTE', c.order_id,
       'current status ACCEPTED at version ' || c.order_version || '; accepted ' || ts_text(c.first_accepted_at) ||
       ', age ' || us_text(age_us(c.first_accepted_at)) || ' s > route SLA ' || getvariable('route_sla_s') || ' s',
       epoch_us(c.first_accepted_at)::VARCHAR
FROM rc01_current c
WHERE c.status = 'ACCEPTED' AND age_us(c.first_accepted_at) > getvariable('route_sla_s')::BIGINT * 1000000
UNION ALL
SELECT 'OUTBOX_UNPUBLISHED', s.order_id,
       'no SENT outbox event; accepted ' || ts_text(s.accepted_at) || ', age ' || us_text(age_us(s.accepted_at)) ||
       ' s > route SLA ' || getvariable('route_sla_s') || ' s',
       epoch_us(s.accepted_at)::VARCHAR
FROM rc01_scope s ANTI JOIN sent ON sent.order_id = s.order_id
WHERE age_us(s.accepted_at) > getvariable('route_sla_s')::BIGINT * 1000000
UNION ALL
SELECT 'ORDER_FILL_STATE_MISMATCH', c.order_id,
       'status ' || c.status || ', ordered_qty ' || dec_text(c.ordered_qty) || ', filled ' || dec_text(coalesce(f.filled_qty, 0::DECIMAL(38,18))),
       epoch_us(c.first_accepted_at)::VARCHAR
FROM rc01_current c LEFT JOIN rc01_filled f USING (order_id)
WHERE (c.status = 'FILLED' AND coalesce(f.filled_qty, 0) <> c.ordered_qty)
   OR (c.status = 'PARTIALLY_FILLED' AND NOT (coalesce(f.filled_qty, 0) > 0 AND coalesce(f.filled_qty, 0) < c.ordered_qty))
   OR (c.status IN ('ACCEPTED', 'ROUTED', 'REJECTED') AND coalesce(f.filled_qty, 0) > 0);
