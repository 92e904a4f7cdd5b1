-- metrics_assets_daily (views/migrations/018_metrics_tables.sql): the composition items per
-- (vault, UTC day), the rows of composition_daily, by the table's column names.
--
-- Inputs: snapshots, registry, day
-- A snapshot changes the items from its UTC day on (prices, balances and weights carry forward;
-- the asset APYs look back 7 and 30 days); a registry entry (targetComposition, yieldAssets) the
-- whole vault; a new UTC day the day before it and itself.
--
-- Parameters: {vaults:Array(String)} the dirty vaults; {froms:Array(Date)} the first dirty UTC
-- day of each, in the same order. views/settle.ts writes these rows over the stored rows of each
-- vault from that day on.
WITH {vaults:Array(String)} AS vaults, {froms:Array(Date)} AS froms
SELECT * FROM {{db}}.composition_daily
WHERE has(vaults, vault) AND day >= froms[indexOf(vaults, vault)]
