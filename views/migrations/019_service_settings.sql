-- Settings of the service that the views read (docs/architecture.md#view-layout): one row,
-- written by the streams role at start from its config (views/settings.ts). Without a row the
-- views prefer no chain.

CREATE TABLE IF NOT EXISTS {{db}}.service_settings {{on_cluster}} (
  id UInt8 COMMENT 'Always 0: one row',
  primary_chain_id UInt32 COMMENT 'The primary chain (config mintFlow.primaryChainId): its accountant rate is a vault''s price when it has one',
  updated_at DateTime64(3, 'UTC') COMMENT 'When the row was written; the newest wins'
) ENGINE = ReplacingMergeTree(updated_at)
ORDER BY id
COMMENT 'Settings of the service the views read (the primary chain), from the streams role''s config';
