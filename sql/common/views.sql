-- Tables derived once from the loaded datasets and shared by several controls (CONTRACT §4).
-- Materialized, not views: RC01 and RC02 both read them, and a view would recompute the window.

-- Acceptance time of an order: the earliest non-empty accepted_at over its versions.
CREATE OR REPLACE TABLE order_acceptance AS
SELECT order_id, min(accepted_at) AS accepted_at
FROM orders WHERE accepted_at IS NOT NULL
GROUP BY order_id;

-- Current state of every order: its highest version. When two differing rows share that version
-- (an ORDER_VERSION_CONFLICT) the latest delivered row is taken, then the first in source order,
-- so the choice is deterministic.
CREATE OR REPLACE TABLE order_current AS
SELECT * FROM orders
QUALIFY row_number() OVER (PARTITION BY order_id ORDER BY order_version DESC, ingested_at DESC, _source) = 1;
