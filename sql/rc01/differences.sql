-- RC01 differences (CONTRACT §4): one row per (kind, key).
WITH version_stats AS (
  -- From the per-order summary (common/views.sql), not another pass over orders: distinct
  -- versions = rows − the extra rows of versions held by several rows.
  SELECT v.order_id, v.row_count, v.row_count - coalesce(x.extra, 0) AS n, v.lo, v.hi
  FROM order_versions v SEMI JOIN rc01_scope s ON s.order_id = v.order_id
  LEFT JOIN (SELECT order_id, sum(row_count - 1) AS extra FROM order_version_conflicts GROUP BY order_id) x USING (order_id)
), gaps AS (
  SELECT * FROM version_stats WHERE lo <> 1 OR n <> hi
), versions AS (
  -- The list of versions present (distinct, sorted as text) is built only for the orders with a gap.
  SELECT g.order_id, g.n, g.lo, g.hi, p.present
  FROM gaps g JOIN (
    SELECT o.order_id, string_agg(DISTINCT o.order_version::VARCHAR, ',' ORDER BY o.order_version::VARCHAR) AS present
    FROM orders o SEMI JOIN gaps g ON g.order_id = o.order_id GROUP BY o.order_id
  ) p USING (order_id)
), conflicts AS (
  SELECT c.order_id, c.order_version, c.row_count AS n
  FROM order_version_conflicts c SEMI JOIN rc01_scope s ON s.order_id = c.order_id
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
