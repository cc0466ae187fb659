-- Macros shared by every control's SQL. Session variables set by the pipeline before a control
-- runs: window_start, window_end (TIMESTAMP, UTC, half-open), as_of (TIMESTAMP or NULL: the
-- smallest watermark of the datasets the control reads, CONTRACT §3) and the control's params.

-- Exact decimal text without trailing zeros: 1.500000000000000000 -> '1.5', 10.000 -> '10'.
CREATE OR REPLACE MACRO dec_text(x) AS
  CASE WHEN x IS NULL THEN NULL
       WHEN contains(x::VARCHAR, '.') THEN rtrim(rtrim(x::VARCHAR, '0'), '.')
       ELSE x::VARCHAR END;

-- t in the run window [start, end).
CREATE OR REPLACE MACRO in_window(t) AS t >= getvariable('window_start')::TIMESTAMP AND t < getvariable('window_end')::TIMESTAMP;

-- Microseconds from t to as-of (NULL when as-of is unknown).
CREATE OR REPLACE MACRO age_us(t) AS epoch_us(getvariable('as_of')::TIMESTAMP) - epoch_us(t);

-- Microseconds as exact seconds text: 1500000 -> '1.5'.
CREATE OR REPLACE MACRO us_text(x) AS dec_text(x::DECIMAL(38,0) * 0.000001::DECIMAL(7,6));

-- ISO-8601 UTC text with microseconds.
CREATE OR REPLACE MACRO ts_text(t) AS strftime(t, '%Y-%m-%dT%H:%M:%S.%fZ');

-- A sum or amount in minor units as the type money is computed in: DECIMAL(38,0) here (exact,
-- fast). When a control's sum passes DECIMAL(38) the control runs again with sql/common/wide.sql,
-- which makes this BIGNUM (DuckDB's variable-width integer) for that control only.
CREATE OR REPLACE MACRO minor(x) AS x::DECIMAL(38,0);

-- A constant list a records query filters a large dataset's column by before its join (the parts
-- of the control's difference keys; the posting sets or orders they reach), so DuckDB tests it in
-- the scan and computes the dataset's other columns (a view's _source above all) only for rows
-- that can match. list_contains compares each row with every element (6.5 s for 1,000 over 5M
-- rows; hours for the 10^5 differences of a 1M split window), so a list of more than 32 is
-- NULL instead, and in_short_list then passes every row: the filter only narrows what the join
-- sees, the join decides.
CREATE OR REPLACE MACRO short_list(l) AS CASE WHEN len(l) <= 32 THEN l END;
CREATE OR REPLACE MACRO in_short_list(l, x) AS coalesce(list_contains(l, x), true);

-- x is a part of one of the control's difference keys (records.sql only: the pipeline sets
-- difference_key_parts to short_list of every part of every key).
CREATE OR REPLACE MACRO in_key_parts(x) AS in_short_list(getvariable('difference_key_parts'), x);

-- Signed ledger amount, credit-normal (CONTRACT §2): CREDIT +, DEBIT -.
CREATE OR REPLACE MACRO signed_minor(direction, amount) AS CASE direction WHEN 'CREDIT' THEN amount ELSE -amount END;

-- Signed fill quantity / notional: BUY +, SELL -.
CREATE OR REPLACE MACRO signed_side(side, v) AS CASE side WHEN 'BUY' THEN v ELSE -v END;
