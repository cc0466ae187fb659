-- Tables derived once from the loaded datasets and shared by several controls (CONTRACT §4).
-- Materialized, not views: RC01 and RC02 both read them, and a view would recompute them.

-- Per order, in one grouped pass over orders: the acceptance time, the _source of its current
-- row, and the row count and lowest and highest versions (RC01's version checks).
--   accepted_at: the earliest non-empty accepted_at over its versions (min ignores NULL).
--   current_source: the row of the highest version; when two differing rows share that version
--     (an ORDER_VERSION_CONFLICT) the latest delivered row (ingested_at), then the first in source
--     order, so the choice is deterministic. arg_min over (-version, -ingested_at µs, _source) is
--     exactly ORDER BY order_version DESC, ingested_at DESC, _source; all three are required
--     (never NULL), and _source (`file:row`) is unique per record, so the winner is unique.
-- Only plain aggregates and one arg_min per order: DuckDB spills these past its memory limit. A
-- list of versions per order, or count(DISTINCT), ran out of memory on a 10M-order day (35M rows).
CREATE OR REPLACE TABLE order_versions AS
SELECT order_id, min(accepted_at) AS accepted_at,
       arg_min(_source, (-order_version, -epoch_us(ingested_at), _source)) AS current_source,
       count(*) AS row_count, min(order_version) AS lo, max(order_version) AS hi
FROM orders GROUP BY order_id;

-- Versions held by more than one row (exact duplicates were collapsed at load, so these rows
-- differ: ORDER_VERSION_CONFLICT). Rare, so the table is tiny; an order's distinct versions are
-- its row_count minus the extra rows listed here.
CREATE OR REPLACE TABLE order_version_conflicts AS
SELECT order_id, order_version, count(*) AS row_count
FROM orders GROUP BY order_id, order_version HAVING count(*) > 1;

-- Acceptance time of an order: the earliest non-empty accepted_at over its versions.
CREATE OR REPLACE TABLE order_acceptance AS
SELECT order_id, accepted_at FROM order_versions WHERE accepted_at IS NOT NULL;

-- Current state of every order: its highest version (ties as above).
CREATE OR REPLACE TABLE order_current AS
SELECT o.* FROM orders o SEMI JOIN order_versions v ON v.order_id = o.order_id AND v.current_source = o._source;
