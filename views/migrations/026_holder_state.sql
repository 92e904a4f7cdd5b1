-- The holder state behind the settle step's holder tables (docs/architecture.md#precomputed-metrics),
-- so that a change costs what it changed, not the vault's history:
-- - transfer_sides: each side of each share transfer (zero addresses left out, as in
--   balance_deltas), every state of the event (read with FINAL and removed = 0), ordered by
--   (vault, block_time): a vault's transfers from a day on are read without its history. The
--   holder counts from that day on are its balance on the day before (balance_deltas' current
--   balance minus these changes) carried forward over these changes.
-- - metrics_holder_since: holderSince (holder_since) of every holder whose balance ever went
--   positive, written by views/settle.ts for the holders whose transfers changed, so the top
--   holders take it from here instead of replaying every transfer of every top holder.
-- - metrics_settle_state.holder_state: 1 once a settle built metrics_holder_since from the whole
--   history (until then, every vault's transfers are dirty from 1970-01-01).
-- Every version of an event has its block's time, so the sorting key (the replacing key) holds
-- one row per event side and version order (as activity_by_time, migration 024).

CREATE TABLE IF NOT EXISTS {{db}}.transfer_sides {{on_cluster}} (
  vault LowCardinality(String) COMMENT 'Vault slug',
  block_time DateTime('UTC') COMMENT 'Block timestamp',
  chain_id UInt32 COMMENT 'Chain id; 101 for Solana',
  block_number UInt64 COMMENT 'Block number (Solana: slot)',
  log_index UInt32 COMMENT 'Log index in the block',
  event_id String COMMENT 'Natural identity chainId:blockHash:logIndex of the transfer',
  side UInt8 COMMENT '0 = the sender, 1 = the receiver',
  holder String COMMENT 'Holder address (the sender or the receiver)',
  delta Int256 COMMENT 'Balance change of the holder: -amount for the sender, +amount for the receiver, raw units',
  ver UInt64 COMMENT 'Insert sequence of the transfer; the newest state of an event wins',
  removed UInt8 COMMENT '1 = the transfer is retracted (reorg)'
) ENGINE = ReplacingMergeTree(ver, removed)
ORDER BY (vault, block_time, chain_id, block_number, event_id, side)
SETTINGS index_granularity = 1024
COMMENT 'Each side of each share transfer (transfers_raw) ordered by (vault, block_time): the changes of a vault from a day on, read without its history (views/settle-holders.ts)';

CREATE MATERIALIZED VIEW IF NOT EXISTS {{db}}.transfer_sides_mv {{on_cluster}} TO {{db}}.transfer_sides AS
SELECT vault, block_time, chain_id, block_number, log_index, event_id, s.1 AS side, s.2 AS holder, s.3 AS delta, ver, removed
FROM {{db}}.transfers_raw
ARRAY JOIN [(toUInt8(0), from_address, -toInt256(amount)), (toUInt8(1), to_address, toInt256(amount))] AS s
WHERE s.2 NOT IN ('0x0000000000000000000000000000000000000000', '11111111111111111111111111111111');

-- The rows stored before this migration (a row the view has copied already is the same key and
-- version, so a copy twice is one row).
INSERT INTO {{db}}.transfer_sides
SELECT vault, block_time, chain_id, block_number, log_index, event_id, s.1 AS side, s.2 AS holder, s.3 AS delta, ver, removed
FROM {{db}}.transfers_raw
ARRAY JOIN [(toUInt8(0), from_address, -toInt256(amount)), (toUInt8(1), to_address, toInt256(amount))] AS s
WHERE s.2 NOT IN ('0x0000000000000000000000000000000000000000', '11111111111111111111111111111111');

CREATE TABLE IF NOT EXISTS {{db}}.metrics_holder_since {{on_cluster}} (
  vault LowCardinality(String) COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain id; 101 for Solana',
  holder String COMMENT 'Holder address',
  since DateTime('UTC') COMMENT 'holderSince: block time at which the balance last went from <= 0 to > 0',
  version UInt64 COMMENT 'Settle version that wrote the row (the highest wins)',
  deleted UInt8 COMMENT '1 = tombstone: the balance never went positive any more'
) ENGINE = ReplacingMergeTree(version, deleted)
ORDER BY (vault, chain_id, holder)
COMMENT 'holderSince of every (vault, chain, holder) whose balance ever went positive, as holder_since computes it (views/settle.ts)';

ALTER TABLE {{db}}.metrics_settle_state {{on_cluster}}
  ADD COLUMN IF NOT EXISTS holder_state UInt8 DEFAULT 0
  COMMENT '1 once a settle built metrics_holder_since from the whole history (until then every vault''s transfers are dirty from 1970-01-01)';
