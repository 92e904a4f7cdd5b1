-- Precomputed metrics (docs/architecture.md#precomputed-metrics), the head: what the vault
-- resources answer for today in one row per vault, and the volume per second that volume24h
-- sums at the API clock. views/settle.ts writes them after the tables of 018 and 021, from those
-- tables and the registry, watermarks and activity: a row is rewritten with a higher version, and
-- a row no longer produced gets a tombstone (deleted = 1). Read them with FINAL.

CREATE TABLE IF NOT EXISTS {{db}}.metrics_vault_head {{on_cluster}} (
  vault LowCardinality(String) COMMENT 'Vault slug',
  day Date COMMENT 'UTC day the row answers for (the settle clock''s today); the API uses it only on that day',
  status LowCardinality(String) COMMENT 'CMS status (vault_registry)',
  vault_address String COMMENT 'Share token / vault address, lower-case (vault_registry)',
  name String COMMENT 'Display name (vault_registry)',
  symbol String COMMENT 'Share token symbol (vault_registry)',
  decimals UInt8 COMMENT 'Share token decimals (vault_registry)',
  chain_ids Array(UInt32) COMMENT 'EVM chain ids (vault_registry)',
  solana_mint String COMMENT 'Solana mint of the share token, empty when none (vault_registry)',
  base_asset_usd_price Decimal(38, 18) COMMENT 'Configured USD price of the base asset (vault_registry)',
  base_asset_decimals UInt8 COMMENT 'Decimals of the base asset (vault_registry)',
  info String COMMENT 'Full registry entry as JSON (vault_registry)',
  watermark DateTime('UTC') COMMENT 'Oldest chain watermark of the vault, 1970-01-01 when one chain has none (vault_settlement)',
  first_day Nullable(Date) COMMENT 'First day of the vault price history (metrics_vault_daily price_day = 1); null without one',
  has_price UInt8 COMMENT '1 when the vault has a rate (metrics_vault_current)',
  chain_id UInt32 COMMENT 'Price chain (metrics_vault_current)',
  rate_raw UInt256 COMMENT 'Latest accountant rate on the price chain, raw units (metrics_vault_current)',
  rate_decimals UInt8 COMMENT 'Decimals of rate_raw (metrics_vault_current)',
  updated_at DateTime('UTC') COMMENT 'Block time of the latest rate (metrics_vault_current)',
  holders UInt64 COMMENT 'numHolders (metrics_vault_current)',
  tvl_usd_e18 Int256 COMMENT 'TVL of the day, USD scaled by 1e18 (metrics_vault_daily; 0 without a row)',
  tvl_30d_change_pct Float64 COMMENT 'tvl30DayChange of the day, percent (metrics_vault_daily; 0 without a row)',
  liquid_funds_usd_e18 Int256 COMMENT 'Liquid funds of the day, USD scaled by 1e18 (metrics_vault_daily; 0 without a row)',
  liquid_funds_range_pct Float64 COMMENT 'liquidFundsRange of the day, percent (metrics_vault_daily; 0 without a row)',
  nav_rolling7d Nullable(Float64) COMMENT 'navApy rolling 7 days of the latest settled day on the price chain (metrics_chain_daily)',
  nav_rolling30d Nullable(Float64) COMMENT 'navApy rolling 30 days of the latest settled day on the price chain',
  nav_sec30d Nullable(Float64) COMMENT 'navApy SEC 30-day of the latest settled day on the price chain',
  version UInt64 COMMENT 'Settle version that wrote the row (the highest wins)',
  deleted UInt8 COMMENT '1 = tombstone: the vault left the registry'
) ENGINE = ReplacingMergeTree(version, deleted)
ORDER BY vault
COMMENT 'Per vault, today: registry entry, watermark, current price and holders, TVL, liquid funds and the latest settled navApy (views/settle.ts)';

CREATE TABLE IF NOT EXISTS {{db}}.metrics_volume {{on_cluster}} (
  vault LowCardinality(String) COMMENT 'Vault slug',
  block_time DateTime('UTC') COMMENT 'Block time, UTC',
  assets_decimals UInt8 COMMENT 'Decimals of the asset token',
  assets UInt256 COMMENT 'Assets of the DEPOSIT, WITHDRAW and INSTANT_REDEEM activity at that second, raw units (transactions)',
  version UInt64 COMMENT 'Settle version that wrote the row (the highest wins)',
  deleted UInt8 COMMENT '1 = tombstone: retracted since'
) ENGINE = ReplacingMergeTree(version, deleted)
ORDER BY (vault, block_time, assets_decimals)
COMMENT 'Assets moved into or out of the vault per second and asset decimals, as transactions holds them: volume24h sums the last 24 h at the API clock (views/settle.ts)';
