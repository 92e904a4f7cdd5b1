-- metrics_vault_head (views/migrations/025_metrics_head.sql): per registered vault, one row for
-- the settle clock's UTC day: its registry entry (vault_registry), watermark and chain blocks
-- (vault_settlement, read together: the provenance of the vault resources),
-- the first day of its price history, current price and holders, today's TVL and liquid funds,
-- and the navApy of its latest settled day on its price chain, from the tables settled before it
-- in the same settle (metrics_vault_daily, metrics_vault_current, metrics_chain_daily).
--
-- Inputs: rates, transfers, redemptions, snapshots, registry, day, watermarks
-- Every input of those tables; a new UTC day (the row is of today); a watermark or chain block that
-- differs from the head's (it moved, or a reorg took it back: the latest settled day follows it).
--
-- Parameters: {vaults:Array(String)} the dirty vaults (their rows are rewritten whole; a vault
-- that left the registry has none, so its row is hidden).
WITH {vaults:Array(String)} AS vaults
SELECT r.vault AS vault, today() AS day, r.status AS status, r.vault_address AS vault_address,
  r.name AS name, r.symbol AS symbol, r.decimals AS decimals, r.chain_ids AS chain_ids,
  r.solana_mint AS solana_mint, r.base_asset_usd_price AS base_asset_usd_price,
  r.base_asset_decimals AS base_asset_decimals, r.info AS info, s.watermark AS watermark, s.blocks AS blocks,
  if(fd.vault = '', NULL, fd.first) AS first_day, c.has_price AS has_price, c.chain_id AS chain_id,
  c.rate_raw AS rate_raw, c.rate_decimals AS rate_decimals, c.updated_at AS updated_at, c.holders AS holders,
  d.tvl_usd_e18 AS tvl_usd_e18, d.tvl_30d_change_pct AS tvl_30d_change_pct,
  d.liquid_funds_usd_e18 AS liquid_funds_usd_e18, d.liquid_funds_range_pct AS liquid_funds_range_pct,
  n.rolling7d AS nav_rolling7d, n.rolling30d AS nav_rolling30d, n.sec30d AS nav_sec30d
FROM (SELECT slug AS vault, * EXCEPT slug FROM {{db}}.vault_registry) AS r
LEFT JOIN {{db}}.vault_settlement AS s ON s.vault = r.vault
LEFT JOIN (
  SELECT toString(vault) AS vault, min(day) AS first FROM {{db}}.metrics_vault_daily FINAL
  WHERE price_day = 1 AND day <= today() GROUP BY vault
) AS fd ON fd.vault = r.vault
LEFT JOIN (SELECT * FROM {{db}}.metrics_vault_current FINAL) AS c ON c.vault = r.vault
LEFT JOIN (SELECT * FROM {{db}}.metrics_vault_daily FINAL WHERE day = today()) AS d ON d.vault = r.vault
LEFT JOIN (
  SELECT * FROM {{db}}.metrics_chain_daily FINAL
  WHERE (vault, day) IN (SELECT vault, last_settled_day FROM {{db}}.vault_settlement)
) AS n ON n.vault = r.vault AND n.chain_id = c.chain_id
WHERE has(vaults, r.vault)
