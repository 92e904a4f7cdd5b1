-- /vaults/apy-history of one vault ({slug:String}) at the clock {now:UInt32}: the settled days
-- of its history with compositionApy and navApy from the closes of chain {chainId:UInt32}
-- (98866 by default in the API, as the spec says).
WITH toDateTime({now:UInt32}, 'UTC') AS at
SELECT toUInt32(toDateTime(p.day, 'UTC')) AS day,
  c.rolling7d AS compositionApy_rolling7d, c.rolling30d AS compositionApy_rolling30d, c.sec30d AS compositionApy_sec30d,
  n.rolling7d AS navApy_rolling7d, n.rolling30d AS navApy_rolling30d, n.sec30d AS navApy_sec30d
FROM vaultstream.vault_price_daily AS p
INNER JOIN vaultstream.vault_settlement AS s ON s.vault = p.vault
LEFT JOIN vaultstream.composition_apy_daily AS c ON c.vault = p.vault AND c.day = p.day
LEFT JOIN vaultstream.nav_apy_daily AS n ON n.vault = p.vault AND n.chain_id = {chainId:UInt32} AND n.day = p.day
WHERE p.vault = {slug:String} AND p.day <= toDate(least(at, s.watermark)) - 1
ORDER BY p.day
