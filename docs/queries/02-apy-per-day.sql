-- APY per vault and settled UTC day: navApy on the vault price chain and compositionApy (percent).
SELECT n.vault AS vault, n.day AS day, n.chain_id AS price_chain,
  n.rolling7d AS nav_apy_7d, n.rolling30d AS nav_apy_30d, n.sec30d AS nav_sec30d,
  c.rolling7d AS composition_apy_7d, c.rolling30d AS composition_apy_30d
FROM vaultstream.nav_apy_daily AS n
INNER JOIN vaultstream.vault_price_current AS p ON p.vault = n.vault AND p.chain_id = n.chain_id
LEFT JOIN vaultstream.composition_apy_daily AS c ON c.vault = n.vault AND c.day = n.day
WHERE n.settled = 1
ORDER BY vault, day
