CREATE TABLE IF NOT EXISTS {{db}}.chain_watermark_raw {{on_cluster}} (
  chain_id UInt32 COMMENT 'EVM chain id; 101 for Solana',
  block_number UInt64 COMMENT 'A canonical block the ingester published (Solana: slot)',
  block_time DateTime('UTC') COMMENT 'Its timestamp',
  ver UInt64 COMMENT 'Insert sequence of its blocks_raw row: the newest one is the chain watermark'
) ENGINE = ReplacingMergeTree(ver)
ORDER BY chain_id
COMMENT 'The newest canonical block published per chain (chain_watermarks reads it rather than every header of blocks_raw): the ingesters publish blocks in order and, after retracting a reorg, the common ancestor again';

CREATE MATERIALIZED VIEW IF NOT EXISTS {{db}}.chain_watermark_mv {{on_cluster}} TO {{db}}.chain_watermark_raw AS
SELECT chain_id, block_number, block_time, ver FROM {{db}}.blocks_raw WHERE removed = 0;

INSERT INTO {{db}}.chain_watermark_raw (chain_id, block_number, block_time, ver)
SELECT chain_id, max(block_number), max(block_time), 0 FROM {{db}}.blocks_raw FINAL WHERE removed = 0 GROUP BY chain_id;
