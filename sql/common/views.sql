-- Tables derived once from the loaded datasets and shared by several controls (CONTRACT §4).
-- Materialized, not views: RC01 and RC02 both read them, and a view would recompute them.

-- Per order, in one grouped pass over orders: the acceptance time (the earliest non-empty
-- accepted_at over its versions; min ignores NULL), the row count and the lowest and highest
-- versions (RC01's version checks, the current version).
-- Only plain aggregates and hash joins here: DuckDB spills those past its memory limit. A list of
-- versions per order, count(DISTINCT …) and arg_min(_source, …) all ran out of memory on a
-- 10M-order day (35M order rows, 2GB limit).
CREATE OR REPLACE TABLE order_versions AS
SELECT order_id, min(accepted_at) AS accepted_at, count(*) AS row_count,
       min(order_version) AS lo, max(order_version) AS hi
FROM orders GROUP BY order_id;

-- Versions held by more than one row (exact duplicates were collapsed at load, so these rows
-- differ: ORDER_VERSION_CONFLICT). Rare, so the table is tiny; an order's distinct versions are
-- its row_count minus the extra rows listed here.
CREATE OR REPLACE TABLE order_version_conflicts AS
SELECT order_id, order_version, count(*) AS row_count
FROM orders GROUP BY order_id, order_version HAVING count(*) > 1;

-- Acceptance time of an order.
CREATE OR REPLACE TABLE order_acceptance AS
SELECT order_id, accepted_at FROM order_versions WHERE accepted_at IS NOT NULL;

-- Current state of every order: the row of its highest version. When two differing rows share
-- that version (an ORDER_VERSION_CONFLICT) the latest delivered (ingested_at), then the first in
-- source order (_source `file:row` is unique per record), so the choice is deterministic: exactly
-- ORDER BY order_version DESC, ingested_at DESC, _source. Orders whose highest version has one
-- row (nearly all) take it by a join; only the few tied ones are ranked. Only the columns the
-- controls read are kept (10M rows on a large day): add one here when a control needs it.
CREATE OR REPLACE TABLE order_current AS
WITH top_ties AS (
  SELECT c.order_id, c.order_version FROM order_version_conflicts c
  SEMI JOIN order_versions v ON v.order_id = c.order_id AND v.hi = c.order_version
)
SELECT o.order_id, o.order_version, o.status, o.ordered_qty, o.instrument_id FROM orders o
SEMI JOIN order_versions v ON v.order_id = o.order_id AND v.hi = o.order_version
ANTI JOIN top_ties t ON t.order_id = o.order_id
UNION ALL
SELECT order_id, order_version, status, ordered_qty, instrument_id FROM (
  SELECT o.* FROM orders o SEMI JOIN top_ties t ON t.order_id = o.order_id AND t.order_version = o.order_version
  QUALIFY row_number() OVER (PARTITION BY o.order_id ORDER BY o.ingested_at DESC, o._source) = 1
);
