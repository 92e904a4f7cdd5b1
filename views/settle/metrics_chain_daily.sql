-- metrics_chain_daily (views/migrations/018_metrics_tables.sql): the close price and navApy per
-- (vault, chain, UTC day), the rows of nav_apy_daily, by the table's column names.
--
-- Inputs: rates, registry, day
-- A rate changes the closes from its UTC day on, and the APYs look back 7 and 30 days from each
-- day, so every later day is recomputed; a registry entry (chains, decimals) the whole vault; a
-- new UTC day the day before it (it closes) and itself (every grid ends at today).
--
-- Parameters: {vaults:Array(String)} the dirty vaults; {froms:Array(Date)} the first dirty UTC
-- day of each, in the same order (1970-01-01: the whole history). views/settle.ts writes these
-- rows over the stored rows of each vault from that day on.
WITH {vaults:Array(String)} AS vaults, {froms:Array(Date)} AS froms
SELECT * FROM {{db}}.nav_apy_daily
WHERE has(vaults, vault) AND day >= froms[indexOf(vaults, vault)]
