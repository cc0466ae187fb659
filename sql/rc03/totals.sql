-- RC03 control totals. Per currency over the legs of scoped posting sets: debit and credit minor
-- units, posting (leg) count, posting-set count. Per account|currency: opening, net, closing,
-- reserved and available minor units (snapshots at exactly start and end; net from postings).
WITH by_currency AS MATERIALIZED (
  -- Per (set, currency) sums from prepare.sql instead of the legs themselves, re-summed per
  -- currency in ONE grouped pass (a set counts once per currency it has legs in).
  SELECT c.currency, minor(sum(c.debit_minor)) AS debit_minor, minor(sum(c.credit_minor)) AS credit_minor,
         sum(c.leg_count) AS leg_count, count(*) AS set_count
  FROM rc03_set_currency c SEMI JOIN rc03_sets s ON s.posting_set_id = c.posting_set_id
  GROUP BY c.currency
), accounts AS (
  SELECT account_id, currency FROM rc03_open UNION SELECT account_id, currency FROM rc03_close UNION SELECT account_id, currency FROM rc03_net
)
SELECT 'debit_minor_by_currency' AS name, currency AS dim, debit_minor::VARCHAR AS value FROM by_currency
UNION ALL SELECT 'credit_minor_by_currency', currency, credit_minor::VARCHAR FROM by_currency
UNION ALL SELECT 'posting_count_by_currency', currency, leg_count::VARCHAR FROM by_currency
UNION ALL SELECT 'posting_set_count_by_currency', currency, set_count::VARCHAR FROM by_currency
UNION ALL SELECT 'posting_set_count', NULL, count(*)::VARCHAR FROM rc03_sets
UNION ALL SELECT 'opening_balance_minor', a.account_id || '|' || a.currency, o.balance_minor::VARCHAR FROM accounts a JOIN rc03_open o USING (account_id, currency)
UNION ALL SELECT 'net_minor', a.account_id || '|' || a.currency, coalesce(n.net_minor, 0)::VARCHAR FROM accounts a LEFT JOIN rc03_net n USING (account_id, currency)
UNION ALL SELECT 'closing_balance_minor', a.account_id || '|' || a.currency, c.balance_minor::VARCHAR FROM accounts a JOIN rc03_close c USING (account_id, currency)
UNION ALL SELECT 'reserved_minor', a.account_id || '|' || a.currency, c.reserved_minor::VARCHAR FROM accounts a JOIN rc03_close c USING (account_id, currency)
UNION ALL SELECT 'available_minor', a.account_id || '|' || a.currency, c.available_minor::VARCHAR FROM accounts a JOIN rc03_close c USING (account_id, currency)
UNION ALL SELECT 'held_reservations_minor', account_id || '|' || currency, held_minor::VARCHAR FROM rc03_held
ORDER BY 1, 2;
