-- The chains the service is configured for, by id and name, so the data team can name the
-- chain_id of every table (docs/architecture.md#view-layout). Written by the streams role at
-- start (and by `vaultstream migrate`) from its config (views/settings.ts); a renamed chain
-- replaces its row, a chain taken out of the config keeps its last row (its data stays).

CREATE TABLE IF NOT EXISTS {{db}}.chains {{on_cluster}} (
  chain_id UInt32 COMMENT 'EVM chain id (config chains[].chainId); 101 for Solana',
  name String COMMENT 'The chain''s name: config chains[].name; Solana for 101',
  updated_at DateTime64(3, 'UTC') COMMENT 'When the row was written; the newest per chain_id wins (read with FINAL)'
) ENGINE = ReplacingMergeTree(updated_at)
ORDER BY chain_id
COMMENT 'The configured chains (id and name), from the streams role''s config; read with FINAL';
