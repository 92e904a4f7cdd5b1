-- One join across views: per vault and UTC day the close price, TVL, liquid funds and their
-- share of TVL, navApy, volume and holders at the end of the day (summed over chains).
SELECT p.vault AS vault, p.day AS day, p.price AS price, t.tvl_usd AS tvl_usd, l.liquid_funds_usd AS liquid_funds_usd,
  if(t.tvl_usd = 0, 0, l.liquid_funds_usd / t.tvl_usd * 100) AS liquid_pct,
  n.rolling30d AS nav_apy_30d, ifNull(v.volume_usd, 0) AS volume_usd, h.holders AS holders_end_of_day
FROM vaultstream.vault_price_daily AS p
LEFT JOIN vaultstream.vault_tvl_daily AS t ON t.vault = p.vault AND t.day = p.day
LEFT JOIN vaultstream.liquid_funds_daily AS l ON l.vault = p.vault AND l.day = p.day
LEFT JOIN vaultstream.nav_apy_daily AS n ON n.vault = p.vault AND n.chain_id = p.chain_id AND n.day = p.day
LEFT JOIN vaultstream.volume_daily AS v ON v.vault = p.vault AND v.day = p.day
LEFT JOIN (SELECT vault, day, sum(end) AS holders FROM vaultstream.holder_history_daily GROUP BY vault, day) AS h
  ON h.vault = p.vault AND h.day = p.day
ORDER BY vault, day
