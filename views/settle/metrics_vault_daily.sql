-- metrics_vault_daily (views/migrations/018_metrics_tables.sql): per (vault, UTC day) the price
-- day flag of vault_price_daily, the TVL, tvl30DayChange, liquid funds and liquidFundsRange of
-- vault_liquidity_daily, and the compositionApy as stored: metrics_vault_daily.composition.sql
-- wrote it from composition_apy_daily just before, for the vaults whose composition changed. A
-- row for each day of one of the three.
--
-- Inputs: rates, transfers, redemptions, snapshots, registry, day
-- A rate changes the closes, a transfer the supply, a snapshot the liquid funds, from its UTC day
-- on (they carry forward; tvl30DayChange looks back 30 days); a registry entry the whole vault; a
-- new UTC day the day before it and itself. Redemptions are an input of every daily table, though
-- no column here reads them.
--
-- Parameters: {vaults:Array(String)} the dirty vaults; {froms:Array(Date)} the first dirty UTC
-- day of each, in the same order. views/settle.ts writes these rows over the stored rows of each
-- vault from that day on.
WITH {vaults:Array(String)} AS vaults, {froms:Array(Date)} AS froms
SELECT vault, day, max(price_day) AS price_day, sum(tvl) AS tvl_usd_e18, sum(change) AS tvl_30d_change_pct,
  sum(liquid) AS liquid_funds_usd_e18, sum(range) AS liquid_funds_range_pct, max(comp_day) AS composition_day,
  anyIf(r7, comp_day = 1) AS composition_rolling7d, anyIf(r30, comp_day = 1) AS composition_rolling30d,
  anyIf(sec, comp_day = 1) AS composition_sec30d
FROM (
  SELECT vault, day, toUInt8(1) AS price_day, toInt256(0) AS tvl, 0 AS change, toInt256(0) AS liquid, 0 AS range,
    toUInt8(0) AS comp_day, CAST(NULL, 'Nullable(Float64)') AS r7, CAST(NULL, 'Nullable(Float64)') AS r30,
    CAST(NULL, 'Nullable(Float64)') AS sec
  FROM {{db}}.vault_price_daily WHERE has(vaults, vault) AND day >= froms[indexOf(vaults, vault)]
  UNION ALL
  SELECT vault, day, 0, tvl_usd_e18, tvl_30d_change_pct, liquid_funds_usd_e18, liquid_funds_range_pct, 0, NULL, NULL, NULL
  FROM {{db}}.vault_liquidity_daily WHERE has(vaults, vault) AND day >= froms[indexOf(vaults, vault)]
  UNION ALL
  SELECT toString(vault), day, 0, toInt256(0), 0, toInt256(0), 0, 1, composition_rolling7d, composition_rolling30d,
    composition_sec30d
  FROM {{db}}.metrics_vault_daily FINAL
  WHERE composition_day = 1 AND has(vaults, vault) AND day >= froms[indexOf(vaults, vault)]
) GROUP BY vault, day
