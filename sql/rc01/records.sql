-- RC01 records behind each difference (docs/records.md): the rows of the order's version log and,
-- where the difference compares them with it, its outbox events or its executions. One query per
-- concern; each joins the control's differences (control_differences: kind, key), so only the few
-- orders named are looked up, and filters the dataset by in_key_parts first (macros.sql). Sides: order, outbox, execution. Record keys: order_id|order_version,
-- event_id, execution_id.

-- The version log of the order named: every row (ORDER_VERSION_GAP, ACCEPTED_WITHOUT_ROUTE,
-- OUTBOX_UNPUBLISHED, ORDER_FILL_STATE_MISMATCH: the current state is its highest version), or
-- only the rows of the version named (ORDER_VERSION_CONFLICT, key order_id|order_version).
SELECT d.kind, d.key, 'order' AS side, 'orders' AS dataset, o._source AS source, o.order_id || '|' || o.order_version AS record_key
FROM control_differences d
JOIN orders o ON o.order_id = split_part(d.key, '|', 1) AND in_key_parts(o.order_id)
WHERE d.kind IN ('ORDER_VERSION_GAP', 'ACCEPTED_WITHOUT_ROUTE', 'OUTBOX_UNPUBLISHED', 'ORDER_FILL_STATE_MISMATCH')
   OR (d.kind = 'ORDER_VERSION_CONFLICT' AND o.order_version::VARCHAR = split_part(d.key, '|', 2));

-- OUTBOX_UNPUBLISHED: the order's outbox events (none of them SENT).
SELECT d.kind, d.key, 'outbox' AS side, 'outbox_events' AS dataset, x._source AS source, x.event_id AS record_key
FROM control_differences d JOIN outbox_events x ON x.aggregate_id = d.key AND in_key_parts(x.aggregate_id)
WHERE d.kind = 'OUTBOX_UNPUBLISHED';

-- ORDER_FILL_STATE_MISMATCH: every execution of the order in the extract (the Σ fill_qty compared).
SELECT d.kind, d.key, 'execution' AS side, 'executions' AS dataset, e._source AS source, e.execution_id AS record_key
FROM control_differences d JOIN executions e ON e.order_id = d.key AND in_key_parts(e.order_id)
WHERE d.kind = 'ORDER_FILL_STATE_MISMATCH';
