-- Precomputed metrics (docs/architecture.md#precomputed-metrics) for the holder and activity
-- endpoints, so their answers cost what they return rather than the history:
-- - metrics_holders_daily: holder_history_daily per (vault, chain, day), written by views/settle.ts
--   for the days from the first one a transfer changed (and today's row again each new hour).
-- - metrics_top_holders: vault_top_holders (the 100 largest balances of each vault and of each of
--   its chains, with holderSince), written by views/settle.ts for the vaults whose transfers changed.
-- - settled_hour: the hour the settle last ran in (a new hour adds a sample to today's holder counts).
-- - activity_by_time: activity_raw (copied by a materialized view) ordered by (vault, block_time),
--   which the transactions view reads, so the newest transactions of a vault are its last rows
--   and are read without the history. Every version of an event has its block's time, so the
--   sorting key (the replacing key) still holds one row per event and version order.

CREATE TABLE IF NOT EXISTS {{db}}.metrics_holders_daily {{on_cluster}} (
  vault LowCardinality(String) COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain id; 101 for Solana',
  day Date COMMENT 'UTC day',
  start Int64 COMMENT 'Holder count at 00:00, addresses',
  end Int64 COMMENT 'Holder count at the end of the last ended hour of the day, addresses',
  min Int64 COMMENT 'Lowest hourly sample (hours before the first transfer count as 0), addresses',
  max Int64 COMMENT 'Highest hourly sample, addresses',
  average Float64 COMMENT 'Mean of the hourly samples, addresses',
  count UInt64 COMMENT 'Number of hourly samples (24 for a past day)',
  version UInt64 COMMENT 'Settle version that wrote the row (the highest wins)',
  deleted UInt8 COMMENT '1 = tombstone: the view no longer produces this row'
) ENGINE = ReplacingMergeTree(version, deleted)
ORDER BY (vault, chain_id, day)
COMMENT 'Holder counts per (vault, chain, UTC day), as holder_history_daily computes them (views/settle.ts)';

CREATE TABLE IF NOT EXISTS {{db}}.metrics_top_holders {{on_cluster}} (
  vault LowCardinality(String) COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain id; 101 for Solana',
  holder String COMMENT 'Holder address',
  balance_raw Int256 COMMENT 'Positive share balance, raw units of the chain',
  share_decimals UInt8 COMMENT 'Share decimals on the chain (vault_chain_decimals)',
  balance_e36 Int256 COMMENT 'Balance in 10^-36 shares: the exact scale balances are ranked on across chains',
  since DateTime('UTC') COMMENT 'holderSince: block time at which the balance last went from <= 0 to > 0',
  version UInt64 COMMENT 'Settle version that wrote the row (the highest wins)',
  deleted UInt8 COMMENT '1 = tombstone: no longer among the largest balances'
) ENGINE = ReplacingMergeTree(version, deleted)
ORDER BY (vault, chain_id, holder)
COMMENT 'The 100 largest balances of each vault and of each of its chains, with holderSince, as vault_top_holders computes them (views/settle.ts)';

ALTER TABLE {{db}}.metrics_settle_state {{on_cluster}}
  ADD COLUMN IF NOT EXISTS settled_hour DateTime('UTC') DEFAULT toDateTime(0, 'UTC')
  COMMENT 'Start of the UTC hour of the clock at the last settle (the next hour adds a holder-count sample)';

-- activity_raw's columns (AS), sorted by time.
CREATE TABLE IF NOT EXISTS {{db}}.activity_by_time {{on_cluster}} AS {{db}}.activity_raw
ENGINE = ReplacingMergeTree(ver, removed)
ORDER BY (vault, block_time, chain_id, block_number, event_id)
SETTINGS index_granularity = 1024
COMMENT 'activity_raw ordered by (vault, block_time): the rows behind the transactions view, whose newest ones are read without the history';

CREATE MATERIALIZED VIEW IF NOT EXISTS {{db}}.activity_by_time_mv {{on_cluster}} TO {{db}}.activity_by_time AS
SELECT * FROM {{db}}.activity_raw;

-- The rows stored before this migration (a row the view has copied already is the same key and
-- version, so a copy twice is one row).
INSERT INTO {{db}}.activity_by_time SELECT * FROM {{db}}.activity_raw;
