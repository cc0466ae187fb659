-- RC03 control totals. Per currency over the legs of scoped posting sets: debit and credit minor
-- units, posting (leg) count, posting-set count. Per account|currency: opening, net, closing,
-- reserved and available minor units (snapshots at exactly start and end; net from postings).
WITH legs AS (
  -- Per (set, currency) sums from prepare.sql instead of the legs themselves: the per-currency
  -- totals re-sum them, and a set counts once per currency it has legs in.
  SELECT c.* FROM rc03_set_currency c SEMI JOIN rc03_sets s ON s.posting_set_id = c.posting_set_id
), accounts AS (
  SELECT account_id, currency FROM rc03_open UNION SELECT account_id, currency FROM rc03_close UNION SELECT account_id, currency FROM rc03_net
)
SELECT 'debit_minor_by_currency' AS name, currency AS dim, sum(debit_minor)::DECIMAL(38,0)::VARCHAR AS value FROM legs GROUP BY currency
UNION ALL SELECT 'credit_minor_by_currency', currency, sum(credit_minor)::DECIMAL(38,0)::VARCHAR FROM legs GROUP BY currency
UNION ALL SELECT 'posting_count_by_currency', currency, sum(leg_count)::VARCHAR FROM legs GROUP BY currency
UNION ALL SELECT 'posting_set_count_by_currency', currency, count(*)::VARCHAR FROM legs GROUP BY currency
UNION ALL SELECT 'posting_set_count', NULL, count(*)::VARCHAR FROM rc03_sets
UNION ALL SELECT 'opening_balance_minor', a.account_id || '|' || a.currency, o.balance_minor::VARCHAR FROM accounts a JOIN rc03_open o USING (account_id, currency)
UNION ALL SELECT 'net_minor', a.account_id || '|' || a.currency, coalesce(n.net_minor, 0)::VARCHAR FROM accounts a LEFT JOIN rc03_net n USING (account_id, currency)
UNION ALL SELECT 'closing_balance_minor', a.account_id || '|' || a.currency, c.balance_minor::VARCHAR FROM accounts a JOIN rc03_close c USING (account_id, currency)
UNION ALL SELECT 'reserved_minor', a.account_id || '|' || a.currency, c.reserved_minor::VARCHAR FROM accounts a JOIN rc03_close c USING (account_id, currency)
UNION ALL SELECT 'available_minor', a.account_id || '|' || a.currency, c.available_minor::VARCHAR FROM accounts a JOIN rc03_close c USING (account_id, currency)
UNION ALL SELECT 'held_reservations_minor', account_id || '|' || currency, held_minor::VARCHAR FROM rc03_held
ORDER BY 1, 2;
