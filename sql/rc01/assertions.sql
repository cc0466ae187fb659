-- The four classes partition the accepted orders.
SELECT 'class counts do not sum to the accepted count' AS message
FROM rc01_current
HAVING count(*) <> count(class);
