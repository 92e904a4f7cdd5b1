-- metrics_volume (views/migrations/025_metrics_head.sql): per (vault, second, asset decimals) the
-- assets of the activity that moves assets into or out of the vault (DEPOSIT, WITHDRAW,
-- INSTANT_REDEEM), from transactions; volume24h sums the last 24 h of it at the API clock.
--
-- Inputs: activity
-- An activity row (or its retraction) changes its own second only.
--
-- Parameters: {vaults:Array(String)} the dirty vaults; {froms:Array(Date)} the first dirty UTC
-- day of each, in the same order. views/settle.ts writes these rows over the stored rows of each
-- vault from that day on.
WITH {vaults:Array(String)} AS vaults, {froms:Array(Date)} AS froms
SELECT toString(vault) AS vault, block_time, assets_decimals, sum(assets) AS assets
FROM {{db}}.transactions
WHERE kind IN ('DEPOSIT', 'WITHDRAW', 'INSTANT_REDEEM') AND has(vaults, vault)
  AND toDate(block_time) >= froms[indexOf(vaults, vault)]
GROUP BY vault, block_time, assets_decimals
