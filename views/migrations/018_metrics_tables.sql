-- Precomputed metrics (docs/architecture.md#precomputed-metrics): the daily metrics the API
-- serves, stored per (vault, chain, day) and per (vault, day), and the vault's current price.
-- views/settle.ts writes them from the plain views that define them (nav_apy_daily,
-- vault_price_daily, vault_liquidity_daily, composition_apy_daily, composition_daily,
-- vault_price_current, vault_holders), for the vaults and days whose inputs changed since the last settle: a
-- row is rewritten with a higher version, and a row the views no longer produce gets a
-- tombstone (deleted = 1). Read them with FINAL: the latest version of each key, tombstones
-- hidden.

CREATE TABLE IF NOT EXISTS {{db}}.metrics_chain_daily {{on_cluster}} (
  vault LowCardinality(String) COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain whose closes give the price P',
  day Date COMMENT 'UTC day d, from the chain''s first close to the day of the settle',
  price_e18 Int256 COMMENT 'P(d): close share price in the base asset, scaled by 1e18 (nav_apy_daily)',
  rolling7d Nullable(Float64) COMMENT 'navApy rolling 7 days, percent; null without P(d-7)',
  rolling30d Nullable(Float64) COMMENT 'navApy rolling 30 days, percent; null without P(d-30)',
  sec30d Nullable(Float64) COMMENT 'navApy SEC 30-day yield, percent; null without P(d-30)',
  version UInt64 COMMENT 'Settle version that wrote the row (the highest wins)',
  deleted UInt8 COMMENT '1 = tombstone: the views no longer produce this row'
) ENGINE = ReplacingMergeTree(version, deleted)
ORDER BY (vault, chain_id, day)
COMMENT 'Close price and navApy per (vault, chain, UTC day), as nav_apy_daily computes them (views/settle.ts)';

CREATE TABLE IF NOT EXISTS {{db}}.metrics_vault_daily {{on_cluster}} (
  vault LowCardinality(String) COMMENT 'Vault slug',
  day Date COMMENT 'UTC day: a day of vault_price_daily, vault_liquidity_daily or composition_apy_daily',
  price_day UInt8 COMMENT '1 when the day is in the vault price history (vault_price_daily: its price chain has a close)',
  tvl_usd_e18 Int256 COMMENT 'TVL at the end of the day, USD scaled by 1e18 (0 without supply)',
  tvl_30d_change_pct Float64 COMMENT 'tvl30DayChange, percent (0 without supply)',
  liquid_funds_usd_e18 Int256 COMMENT 'Liquid funds, USD scaled by 1e18 (0 without snapshots)',
  liquid_funds_range_pct Float64 COMMENT 'liquidFundsRange, percent (0 when the TVL is 0)',
  composition_day UInt8 COMMENT '1 when the day has at least one yield asset (composition_apy_daily)',
  composition_rolling7d Nullable(Float64) COMMENT 'compositionApy rolling 7 days, percent',
  composition_rolling30d Nullable(Float64) COMMENT 'compositionApy rolling 30 days, percent',
  composition_sec30d Nullable(Float64) COMMENT 'compositionApy SEC 30-day, percent',
  version UInt64 COMMENT 'Settle version that wrote the row (the highest wins)',
  deleted UInt8 COMMENT '1 = tombstone: the views no longer produce this row'
) ENGINE = ReplacingMergeTree(version, deleted)
ORDER BY (vault, day)
COMMENT 'Per (vault, UTC day): TVL, tvl30DayChange, liquid funds, liquidFundsRange and compositionApy, as vault_liquidity_daily and composition_apy_daily compute them (views/settle.ts)';

CREATE TABLE IF NOT EXISTS {{db}}.metrics_assets_daily {{on_cluster}} (
  vault LowCardinality(String) COMMENT 'Vault slug',
  day Date COMMENT 'UTC day',
  position UInt32 COMMENT 'Position of the item in the vault targetComposition (1-based)',
  slug String COMMENT 'targetComposition item (yield asset) slug',
  usd_price_e18 Int256 COMMENT 'Asset USD price scaled by 1e18',
  apy7d_e18 Nullable(Int256) COMMENT 'Asset 7-day APY, percent scaled by 1e18',
  apy30d_e18 Nullable(Int256) COMMENT 'Asset 30-day APY, percent scaled by 1e18',
  weight_e18 Nullable(Int256) COMMENT 'compositionPct (weight), percent scaled by 1e18',
  version UInt64 COMMENT 'Settle version that wrote the row (the highest wins)',
  deleted UInt8 COMMENT '1 = tombstone: the views no longer produce this row'
) ENGINE = ReplacingMergeTree(version, deleted)
ORDER BY (vault, day, position)
COMMENT 'Composition items per (vault, UTC day), as composition_daily computes them (views/settle.ts)';

CREATE TABLE IF NOT EXISTS {{db}}.metrics_vault_current {{on_cluster}} (
  vault LowCardinality(String) COMMENT 'Vault slug',
  has_price UInt8 COMMENT '1 when the vault has a rate (the price columns are 0 otherwise)',
  chain_id UInt32 COMMENT 'Price chain: the primary chain when it has a rate, else the chain with the most recent rate',
  rate_raw UInt256 COMMENT 'Latest accountant rate on the price chain, base-asset raw units',
  rate_decimals UInt8 COMMENT 'Decimals of rate_raw',
  updated_at DateTime('UTC') COMMENT 'Block time of the latest rate, UTC',
  holders UInt64 COMMENT 'Distinct addresses with a positive balance on any chain (numHolders, vault_holders)',
  version UInt64 COMMENT 'Settle version that wrote the row (the highest wins)',
  deleted UInt8 COMMENT '1 = tombstone: the vault has neither a rate nor a holder any more'
) ENGINE = ReplacingMergeTree(version, deleted)
ORDER BY vault
COMMENT 'Current share price (tokenPrice) and holder count per vault, as vault_price_current and vault_holders compute them (views/settle.ts)';

CREATE TABLE IF NOT EXISTS {{db}}.metrics_settle_state {{on_cluster}} (
  id UInt8 COMMENT 'Always 0: one row',
  since DateTime64(3, 'UTC') COMMENT 'Raw rows ingested after this time are not settled yet',
  settled_day Date COMMENT 'UTC day of the clock at the last settle (the next day rolls the grids forward)',
  version UInt64 COMMENT 'Version of the last settle'
) ENGINE = ReplacingMergeTree(version)
ORDER BY id
COMMENT 'Where views/settle.ts resumes: the ingestion time and day it settled through';
