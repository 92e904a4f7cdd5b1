-- /vaults/{slug}/performance-history of one vault ({slug:String}) at the clock {now:UInt32}:
-- one row per UTC day from the first close on the price chain to today, with the close price,
-- TVL and liquid funds of the day, and compositionApy (apy_*) and navApy on the price chain
-- (navApy_*) once the day is settled (null before).
WITH toDateTime({now:UInt32}, 'UTC') AS at
SELECT p.vault AS vault, toUInt32(toDateTime(p.day, 'UTC')) AS day, p.price AS price,
  ifNull(t.tvl_usd, 0) AS tvl, ifNull(l.liquid_funds_usd, 0) AS liquidFunds,
  p.day <= toDate(least(at, s.watermark)) - 1 AS settled,
  if(settled, c.rolling7d, NULL) AS apy_rolling7d,
  if(settled, c.rolling30d, NULL) AS apy_rolling30d,
  if(settled, c.sec30d, NULL) AS apy_sec30d,
  if(settled, n.rolling7d, NULL) AS navApy_rolling7d,
  if(settled, n.rolling30d, NULL) AS navApy_rolling30d,
  if(settled, n.sec30d, NULL) AS navApy_sec30d
FROM vaultstream.vault_price_daily AS p
LEFT JOIN vaultstream.vault_settlement AS s ON s.vault = p.vault
LEFT JOIN vaultstream.vault_tvl_daily AS t ON t.vault = p.vault AND t.day = p.day
LEFT JOIN vaultstream.liquid_funds_daily AS l ON l.vault = p.vault AND l.day = p.day
LEFT JOIN vaultstream.composition_apy_daily AS c ON c.vault = p.vault AND c.day = p.day
LEFT JOIN vaultstream.nav_apy_daily AS n ON n.vault = p.vault AND n.chain_id = p.chain_id AND n.day = p.day
WHERE p.vault = {slug:String} AND p.day <= toDate(at)
ORDER BY p.day
