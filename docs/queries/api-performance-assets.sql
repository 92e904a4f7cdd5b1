-- performance-history?includeCompositeAssets=true: per day of one vault ({slug:String}, days up to
-- the clock {now:UInt32}) and yield asset with a COMPOSITION snapshot by then, its price, APYs
-- and compositionPct (0 where the snapshot has none).
SELECT toUInt32(toDateTime(c.day, 'UTC')) AS day, c.slug AS slug, c.usd_price AS price, c.apy7d AS apy7d, c.apy30d AS apy30d,
  c.composition_pct AS compositionPct
FROM vaultstream.composition_daily AS c
WHERE c.vault = {slug:String} AND c.day <= toDate(toDateTime({now:UInt32}, 'UTC'))
ORDER BY c.day, c.position
