-- RC05 authority at the window end, per account|instrument: positions at exactly the window start
-- plus Σ signed fills in the window; net cost plus Σ signed rounded notional (BUY +, SELL −).
-- The cost is in the instrument's one trading currency (CONTRACT §4 RC05): a key whose start
-- position and fills name more than one currency has no cost to compare (mixed_currency; its
-- minor units of different currencies are not added into a total, and it is reported as a
-- PROJECTION_COST_MISMATCH naming the currencies).
CREATE OR REPLACE TEMP TABLE rc05_authority AS
WITH start_positions AS (
  SELECT account_id, instrument_id, sum(quantity) AS quantity, minor(sum(cost_minor)) AS cost_minor,
         min(cost_currency) AS cost_currency, max(cost_currency) AS cost_currency_hi
  FROM positions WHERE as_of = getvariable('window_start')::TIMESTAMP GROUP BY account_id, instrument_id
), fills AS (
  SELECT account_id, instrument_id, sum(signed_side(side, fill_qty)) AS quantity,
         minor(sum(signed_side(side, notional_minor))) AS cost_minor,
         min(price_currency) AS cost_currency, max(price_currency) AS cost_currency_hi, max(executed_at) AS last_fill_at
  FROM executions WHERE in_window(executed_at) GROUP BY account_id, instrument_id
)
SELECT account_id, instrument_id,
       coalesce(p.quantity, 0) + coalesce(f.quantity, 0) AS position_qty,
       minor(coalesce(p.cost_minor, 0) + coalesce(f.cost_minor, 0)) AS cost_minor,
       coalesce(p.cost_currency, f.cost_currency) AS cost_currency,
       (p.cost_currency <> p.cost_currency_hi OR f.cost_currency <> f.cost_currency_hi OR p.cost_currency <> f.cost_currency) IS TRUE AS mixed_currency
FROM start_positions p FULL JOIN fills f USING (account_id, instrument_id);

-- The currencies of the few keys that mix them, for the difference's detail.
CREATE OR REPLACE TEMP TABLE rc05_mixed AS
SELECT account_id, instrument_id, string_agg(DISTINCT currency, ', ' ORDER BY currency) AS currencies
FROM (
  SELECT account_id, instrument_id, cost_currency AS currency FROM positions WHERE as_of = getvariable('window_start')::TIMESTAMP
  UNION ALL
  SELECT account_id, instrument_id, price_currency FROM executions WHERE in_window(executed_at)
) x SEMI JOIN (SELECT account_id, instrument_id FROM rc05_authority WHERE mixed_currency) m USING (account_id, instrument_id)
GROUP BY account_id, instrument_id;

-- The build compared: the one holding the latest as_of (ties: the greatest build_id); its
-- earliest as_of measures freshness. Within it, per key, the highest projection_version.
CREATE OR REPLACE TEMP TABLE rc05_build AS
SELECT build_id, min(as_of) AS earliest_as_of, max(as_of) AS latest_as_of
FROM portfolio_projection
WHERE build_id = (SELECT build_id FROM portfolio_projection ORDER BY as_of DESC, build_id DESC LIMIT 1)
GROUP BY build_id;

CREATE OR REPLACE TEMP TABLE rc05_projection AS
SELECT p.* FROM portfolio_projection p SEMI JOIN rc05_build b ON b.build_id = p.build_id
QUALIFY row_number() OVER (PARTITION BY p.account_id, p.instrument_id ORDER BY p.projection_version DESC, p.as_of DESC, p._source) = 1;
