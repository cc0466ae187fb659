-- RC05 control totals: position (instrument units) and cost (minor units) per account|instrument
-- on both sides, and the freshness age in seconds (as-of − the build's earliest as_of).
SELECT 'authority_position_qty' AS name, account_id || '|' || instrument_id AS dim, dec_text(position_qty) AS value FROM rc05_authority
-- A key mixing currencies has no cost total (its difference names the currencies).
UNION ALL SELECT 'authority_cost_minor', account_id || '|' || instrument_id, cost_minor::VARCHAR FROM rc05_authority WHERE NOT mixed_currency
UNION ALL SELECT 'projection_position_qty', account_id || '|' || instrument_id, dec_text(position_qty) FROM rc05_projection
UNION ALL SELECT 'projection_cost_minor', account_id || '|' || instrument_id, cost_minor::VARCHAR FROM rc05_projection
UNION ALL SELECT 'freshness_age_s', NULL, us_text(age_us(earliest_as_of)) FROM rc05_build
UNION ALL SELECT 'projection_build_id', NULL, build_id FROM rc05_build
ORDER BY 1, 2;
