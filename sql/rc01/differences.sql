-- RC01 differences (CONTRACT §4): one row per (kind, key).
WITH version_stats AS (
  -- From the list of versions of each scoped order (common/views.sql), not another pass over orders.
  SELECT v.order_id, v.versions, len(v.versions) AS row_count, len(list_distinct(v.versions)) AS n,
         list_min(v.versions) AS lo, list_max(v.versions) AS hi
  FROM order_versions v SEMI JOIN rc01_scope s ON s.order_id = v.order_id
), versions AS (
  -- The list of versions present (distinct, sorted as text) is built only for the orders with a gap.
  SELECT order_id, n, lo, hi,
         array_to_string(list_sort(list_distinct(list_transform(versions, x -> x::VARCHAR))), ',') AS present
  FROM version_stats WHERE lo <> 1 OR n <> hi
), conflicts AS (
  -- Rows per version, counted only for the orders holding more rows than distinct versions.
  SELECT order_id, order_version, count(*) AS n
  FROM (SELECT order_id, unnest(versions) AS order_version FROM version_stats WHERE row_count > n)
  GROUP BY order_id, order_version HAVING count(*) > 1
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
