-- RC05 records behind each difference (docs/records.md). Sides: authority (positions at exactly
-- the window start and the fills in the window of the key) and projection (the compared build's
-- row of the key). Record keys: account_id|instrument_id|as_of (positions), execution_id,
-- build_id|account_id|instrument_id|projection_version.

-- Kinds keyed by account_id|instrument_id: the authority's records of the key.
WITH named AS (
  SELECT kind, key, split_part(key, '|', 1) AS account_id, split_part(key, '|', 2) AS instrument_id FROM control_differences
  WHERE kind IN ('PROJECTION_KEY_MISSING', 'PROJECTION_KEY_EXTRA', 'PROJECTION_POSITION_MISMATCH', 'PROJECTION_COST_MISMATCH')
)
SELECT n.kind, n.key, 'authority' AS side, 'positions' AS dataset, p._source AS source, p.account_id || '|' || p.instrument_id || '|' || ts_text(p.as_of) AS record_key
FROM named n JOIN positions p ON p.account_id = n.account_id AND p.instrument_id = n.instrument_id
WHERE p.as_of = getvariable('window_start')::TIMESTAMP
UNION ALL
SELECT n.kind, n.key, 'authority', 'executions', e._source, e.execution_id
FROM named n JOIN executions e ON e.account_id = n.account_id AND e.instrument_id = n.instrument_id AND in_key_parts(e.account_id)
WHERE in_window(e.executed_at)
UNION ALL
SELECT n.kind, n.key, 'projection', 'portfolio_projection', r._source, r.build_id || '|' || r.account_id || '|' || r.instrument_id || '|' || r.projection_version
FROM named n JOIN rc05_projection r ON r.account_id = n.account_id AND r.instrument_id = n.instrument_id;

-- PROJECTION_STALE (key build_id): the row that carries the build's earliest as_of (the first in
-- source order when several do): the one record the freshness age is measured from.
SELECT d.kind, d.key, 'projection' AS side, 'portfolio_projection' AS dataset, min(p._source) AS source,
       arg_min(p.build_id || '|' || p.account_id || '|' || p.instrument_id || '|' || p.projection_version, p._source) AS record_key
FROM control_differences d
JOIN rc05_build b ON b.build_id = d.key
JOIN portfolio_projection p ON p.build_id = b.build_id AND p.as_of = b.earliest_as_of
WHERE d.kind = 'PROJECTION_STALE'
GROUP BY d.kind, d.key;
