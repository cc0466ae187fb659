-- RC01 control totals: accepted count and ordered quantity (instrument units) per instrument,
-- and count and quantity per lifecycle class.
WITH classes(class) AS (VALUES ('EXECUTED'), ('PENDING'), ('CANCELED'), ('REJECTED'))
SELECT 'accepted_count' AS name, NULL AS dim, count(*)::VARCHAR AS value FROM rc01_current
UNION ALL
SELECT 'accepted_count_by_instrument', instrument_id, count(*)::VARCHAR FROM rc01_current GROUP BY instrument_id
UNION ALL
SELECT 'ordered_qty_by_instrument', instrument_id, dec_text(sum(ordered_qty)) FROM rc01_current GROUP BY instrument_id
UNION ALL
SELECT 'class_count', k.class, count(c.order_id)::VARCHAR FROM classes k LEFT JOIN rc01_current c USING (class) GROUP BY k.class
UNION ALL
SELECT 'class_ordered_qty', k.class, dec_text(coalesce(sum(c.ordered_qty), 0::DECIMAL(38,18))) FROM classes k LEFT JOIN rc01_current c USING (class) GROUP BY k.class
ORDER BY 1, 2;
