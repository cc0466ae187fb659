-- RC05 differences (CONTRACT §4): the authority (rc05_authority) against the compared build's row
-- per key (rc05_projection), and the build's freshness. Ages are exact microseconds against as-of
-- (the smallest watermark of the datasets read); stale only when strictly greater than the SLA.
WITH build AS (SELECT * FROM rc05_build),
authority AS (
  SELECT a.*, m.currencies AS mixed_currencies,
         CASE WHEN a.mixed_currency THEN 'mixing ' || m.currencies ELSE a.cost_minor || ' ' || coalesce(a.cost_currency, '') END AS cost_text
  FROM rc05_authority a LEFT JOIN rc05_mixed m USING (account_id, instrument_id)
)
SELECT 'PROJECTION_KEY_MISSING' AS kind, a.account_id || '|' || a.instrument_id AS key,
       'authority position ' || dec_text(a.position_qty) || ', cost ' || a.cost_text || '; no projection row' AS detail,
       epoch_us(getvariable('window_end')::TIMESTAMP)::VARCHAR AS record_time_us
FROM authority a ANTI JOIN rc05_projection p USING (account_id, instrument_id)
WHERE a.position_qty <> 0 OR a.cost_minor <> 0 OR a.mixed_currency
UNION ALL
SELECT 'PROJECTION_KEY_EXTRA', p.account_id || '|' || p.instrument_id,
       'projection position ' || dec_text(p.position_qty) || ', cost ' || p.cost_minor || ' ' || p.cost_currency || '; the authority has no such key',
       epoch_us(p.as_of)::VARCHAR
FROM rc05_projection p ANTI JOIN rc05_authority a USING (account_id, instrument_id)
WHERE p.position_qty <> 0 OR p.cost_minor <> 0
UNION ALL
SELECT 'PROJECTION_POSITION_MISMATCH', a.account_id || '|' || a.instrument_id,
       'authority ' || dec_text(a.position_qty) || ' ≠ projection ' || dec_text(p.position_qty),
       epoch_us(p.as_of)::VARCHAR
FROM rc05_authority a JOIN rc05_projection p USING (account_id, instrument_id)
WHERE a.position_qty <> p.position_qty
UNION ALL
SELECT 'PROJECTION_COST_MISMATCH', a.account_id || '|' || a.instrument_id,
       CASE WHEN a.mixed_currency THEN 'authority cost mixes currencies ' || a.mixed_currencies || ' (an instrument trades in one currency) ≠ projection '
            ELSE 'authority ' || a.cost_text || ' ≠ projection ' END || p.cost_minor || ' ' || p.cost_currency,
       epoch_us(p.as_of)::VARCHAR
FROM authority a JOIN rc05_projection p USING (account_id, instrument_id)
WHERE a.mixed_currency OR a.cost_minor <> p.cost_minor OR a.cost_currency IS DISTINCT FROM p.cost_currency -- a cost in another currency is another value
UNION ALL
SELECT 'PROJECTION_STALE', b.build_id,
       'as-of ' || ts_text(getvariable('as_of')::TIMESTAMP) || ' − build as_of ' || ts_text(b.earliest_as_of) || ' = ' || us_text(age_us(b.earliest_as_of)) ||
       ' s > SLA ' || getvariable('stale_sla_s') || ' s',
       epoch_us(b.earliest_as_of)::VARCHAR
FROM build b WHERE age_us(b.earliest_as_of) > getvariable('stale_sla_s')::BIGINT * 1000000;
