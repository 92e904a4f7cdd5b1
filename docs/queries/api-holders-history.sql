-- /vaults/{slug}/holders-history of one vault ({slug:String}) for the days whose 00:00 lies in
-- [{from:UInt32}, {to:UInt32}] (Unix seconds): holder count samples at the end of every hour.
SELECT toUInt32(toDateTime(day, 'UTC')) AS day, chain_id AS chainId, start, end, min, max, average, count
FROM vaultstream.holder_history_daily
WHERE vault = {slug:String} AND toDateTime(day, 'UTC') BETWEEN toDateTime({from:UInt32}, 'UTC') AND toDateTime({to:UInt32}, 'UTC')
ORDER BY day, chain_id
