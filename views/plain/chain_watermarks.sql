CREATE OR REPLACE VIEW {{db}}.chain_watermarks {{on_cluster}} AS
SELECT chain_id, max(block_number) AS block_number, max(block_time) AS block_time, count() AS blocks_seen
FROM {{db}}.blocks_raw FINAL
WHERE removed = 0
GROUP BY chain_id
COMMENT 'Per chain: the newest ingested block and its time (a UTC day is settled for a chain once block_time is past its end)';
ALTER TABLE {{db}}.chain_watermarks {{on_cluster}} COMMENT COLUMN chain_id 'Chain id; 101 for Solana';
ALTER TABLE {{db}}.chain_watermarks {{on_cluster}} COMMENT COLUMN block_number 'Newest ingested block number (Solana: slot)';
ALTER TABLE {{db}}.chain_watermarks {{on_cluster}} COMMENT COLUMN block_time 'Block time of the newest ingested block, UTC: the chain watermark';
ALTER TABLE {{db}}.chain_watermarks {{on_cluster}} COMMENT COLUMN blocks_seen 'Number of canonical blocks ingested';
