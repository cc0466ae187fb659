-- RC02 scope: executions by executed_at, venue fills by their mapped UTC time.
CREATE OR REPLACE TEMP VIEW rc02_executions AS SELECT * FROM executions WHERE in_window(executed_at);
CREATE OR REPLACE TEMP VIEW rc02_venue_fills AS SELECT * FROM venue_fills WHERE in_window(venue_time_utc);

-- The two extracts matched once, and the fills per order: temp tables rather than materialized
-- CTEs of the differences query, so that DuckDB can spill them (that query ran out of memory on a
-- 10M-order CSV day with them inside it).
CREATE OR REPLACE TEMP TABLE rc02_matched AS

  -- The two extracts matched ONCE on venue_id|venue_fill_id (both required, never NULL) by a full
  -- join, instead of an inner join plus two anti joins. Kept: unmatched venue fills in scope,
  -- unmatched executions in scope and matched pairs with either side in scope that differ in
  -- quantity or price; the branches below pick their rows from these by has_e / has_v.
  SELECT coalesce(e.venue_id, v.venue_id) AS venue_id, coalesce(e.venue_fill_id, v.venue_fill_id) AS venue_fill_id,
         e.execution_id IS NOT NULL AS has_e, v.venue_fill_id IS NOT NULL AS has_v,
         e.execution_id, e.executed_at, v.venue_time_utc,
         e.fill_qty AS internal_qty, v.fill_qty AS venue_qty, e.price AS internal_price, v.price AS venue_price,
         least(e.executed_at, v.venue_time_utc) AS record_time
  FROM executions e FULL JOIN venue_fills v ON v.venue_id = e.venue_id AND v.venue_fill_id = e.venue_fill_id
  WHERE (e.execution_id IS NULL AND in_window(v.venue_time_utc))
     OR (v.venue_fill_id IS NULL AND in_window(e.executed_at))
     OR (e.execution_id IS NOT NULL AND v.venue_fill_id IS NOT NULL AND (in_window(e.executed_at) OR in_window(v.venue_time_utc))
         AND (e.fill_qty <> v.fill_qty OR e.price <> v.price));

CREATE OR REPLACE TEMP TABLE rc02_order_fills AS

  -- Per order in ONE pass over executions: Σ fill_qty over the whole extract, and the earliest
  -- executed_at in scope (NULL: no execution of the order is in scope).
  SELECT order_id, sum(fill_qty) AS filled_qty, min(executed_at) FILTER (WHERE in_window(executed_at)) AS first_in_scope
  FROM executions GROUP BY order_id;
