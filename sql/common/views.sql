-- Tables derived once from the loaded datasets and shared by several controls (CONTRACT §4).
-- Materialized, not views: RC01 and RC02 both read them, and a view would recompute them.

-- Per order, in ONE grouped pass over orders (instead of a window over every row plus a second
-- GROUP BY): the acceptance time, the _source of its current row and the versions present.
--   accepted_at: the earliest non-empty accepted_at over its versions (min ignores NULL).
--   current_source: the row of the highest version; when two differing rows share that version
--     (an ORDER_VERSION_CONFLICT) the latest delivered row (ingested_at), then the first in source
--     order, so the choice is deterministic. arg_min over (-version, -ingested_at µs, _source) is
--     exactly ORDER BY order_version DESC, ingested_at DESC, _source; all three are required
--     (never NULL), and _source (`file:row`) is unique per record, so the winner is unique.
--   versions: every row's order_version; RC01 derives its version checks from this list, which
--     is cheaper than count(DISTINCT order_version) per order.
CREATE OR REPLACE TABLE order_versions AS
SELECT order_id, min(accepted_at) AS accepted_at,
       arg_min(_source, (-order_version, -epoch_us(ingested_at), _source)) AS current_source,
       list(order_version) AS versions
FROM orders GROUP BY order_id;

-- Acceptance time of an order: the earliest non-empty accepted_at over its versions.
CREATE OR REPLACE TABLE order_acceptance AS
SELECT order_id, accepted_at FROM order_versions WHERE accepted_at IS NOT NULL;

-- Current state of every order: its highest version (ties as above).
CREATE OR REPLACE TABLE order_current AS
SELECT o.* FROM orders o SEMI JOIN order_versions v ON v.order_id = o.order_id AND v.current_source = o._source;
