-- RC02 control totals for both sides: fill count and quantity per instrument, notional in minor
-- units per currency (rounded fill by fill at load, then summed).
SELECT 'internal_fill_count_by_instrument' AS name, instrument_id AS dim, count(*)::VARCHAR AS value FROM rc02_executions GROUP BY instrument_id
UNION ALL SELECT 'internal_fill_qty_by_instrument', instrument_id, dec_text(sum(fill_qty)) FROM rc02_executions GROUP BY instrument_id
UNION ALL SELECT 'internal_notional_minor_by_currency', price_currency, sum(notional_minor)::VARCHAR FROM rc02_executions GROUP BY price_currency
UNION ALL SELECT 'internal_fill_count', NULL, count(*)::VARCHAR FROM rc02_executions
UNION ALL SELECT 'venue_fill_count_by_instrument', instrument_id, count(*)::VARCHAR FROM rc02_venue_fills GROUP BY instrument_id
UNION ALL SELECT 'venue_fill_qty_by_instrument', instrument_id, dec_text(sum(fill_qty)) FROM rc02_venue_fills GROUP BY instrument_id
UNION ALL SELECT 'venue_notional_minor_by_currency', price_currency, sum(notional_minor)::VARCHAR FROM rc02_venue_fills GROUP BY price_currency
UNION ALL SELECT 'venue_fill_count', NULL, count(*)::VARCHAR FROM rc02_venue_fills
ORDER BY 1, 2;
