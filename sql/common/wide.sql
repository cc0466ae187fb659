-- The wide fallback (issue 18): run before a control whose totals or comparisons overflowed
-- DECIMAL(38) / HUGEINT on the fast path, after the pipeline has shadowed every minor-units column
-- of the datasets the control reads with a temporary view holding it as BIGNUM (DuckDB's
-- variable-width integer, exact at any size). Sums, additions, negations and comparisons of
-- BIGNUM are exact; a BIGNUM never meets a DECIMAL in one expression here (DuckDB would turn the
-- pair into DOUBLE), and the pipeline refuses any DOUBLE column a control creates in this mode.
-- About 40 times slower than DECIMAL sums, so it is never the normal path. TEMP: it shadows
-- sql/common/macros.sql's minor() on the control's own connection only (another control may be
-- running on a second one); undone by dropping it.
CREATE OR REPLACE TEMP MACRO minor(x) AS x::BIGNUM;
