-- metrics_vault_daily (views/migrations/018_metrics_tables.sql), first of its two writes: the
-- compositionApy of the vaults whose composition inputs changed, from composition_apy_daily;
-- each row's other columns as stored. Skipped when no vault's composition inputs changed: the
-- composition views cost the settle most of its time to plan, even for no vault.
-- metrics_vault_daily.sql then writes the rows from the stored compositionApy this leaves.
--
-- Inputs: snapshots, registry, day
-- A snapshot changes the composition from its UTC day on (prices, balances and weights carry
-- forward; the asset APYs look back 7 and 30 days); a registry entry (targetComposition,
-- yieldAssets) the whole vault; a new UTC day the day before it and itself.
--
-- Parameters: {vaults:Array(String)} those vaults; {froms:Array(Date)} the first dirty UTC day
-- of each, in the same order. views/settle.ts writes these rows over the stored rows of each
-- vault from that day on: every stored row comes back (a day without composition with
-- composition_day = 0), and the days composition_apy_daily adds.
WITH {vaults:Array(String)} AS vaults, {froms:Array(Date)} AS froms
SELECT vault, day, max(price_day) AS price_day, sum(tvl) AS tvl_usd_e18, sum(change) AS tvl_30d_change_pct,
  sum(liquid) AS liquid_funds_usd_e18, sum(range) AS liquid_funds_range_pct, max(comp_day) AS composition_day,
  anyIf(r7, comp_day = 1) AS composition_rolling7d, anyIf(r30, comp_day = 1) AS composition_rolling30d,
  anyIf(sec, comp_day = 1) AS composition_sec30d
FROM (
  SELECT toString(vault) AS vault, day, price_day, tvl_usd_e18 AS tvl, tvl_30d_change_pct AS change,
    liquid_funds_usd_e18 AS liquid, liquid_funds_range_pct AS range, toUInt8(0) AS comp_day,
    CAST(NULL, 'Nullable(Float64)') AS r7, CAST(NULL, 'Nullable(Float64)') AS r30, CAST(NULL, 'Nullable(Float64)') AS sec
  FROM {{db}}.metrics_vault_daily FINAL WHERE has(vaults, vault) AND day >= froms[indexOf(vaults, vault)]
  UNION ALL
  SELECT vault, day, 0, toInt256(0), 0, toInt256(0), 0, 1, rolling7d, rolling30d, sec30d
  FROM {{db}}.composition_apy_daily WHERE has(vaults, vault) AND day >= froms[indexOf(vaults, vault)]
) GROUP BY vault, day
