-- RC01 scope: orders whose acceptance time (earliest non-empty accepted_at) is in the window.
CREATE OR REPLACE TEMP TABLE rc01_scope AS
SELECT order_id, accepted_at FROM order_acceptance WHERE in_window(accepted_at);

CREATE OR REPLACE TEMP TABLE rc01_current AS
SELECT c.*, s.accepted_at AS first_accepted_at,
       CASE WHEN c.status IN ('FILLED', 'PARTIALLY_FILLED') THEN 'EXECUTED'
            WHEN c.status IN ('ACCEPTED', 'ROUTED') THEN 'PENDING'
            WHEN c.status IN ('CANCELED', 'EXPIRED') THEN 'CANCELED'
            WHEN c.status = 'REJECTED' THEN 'REJECTED' END AS class
FROM order_current c JOIN rc01_scope s USING (order_id);

-- Σ fill_qty over all executions of each scoped order in the extract.
CREATE OR REPLACE TEMP TABLE rc01_filled AS
SELECT e.order_id, sum(e.fill_qty) AS filled_qty
FROM executions e SEMI JOIN rc01_scope s ON s.order_id = e.order_id
GROUP BY e.order_id;
