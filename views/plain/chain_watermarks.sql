CREATE OR REPLACE VIEW {{db}}.chain_watermarks {{on_cluster}} AS
SELECT chain_id, argMax(block_number, ver) AS block_number, argMax(block_time, ver) AS block_time
FROM {{db}}.chain_watermark_raw
GROUP BY chain_id
COMMENT 'Per chain: the newest ingested block and its time, from the small chain_watermark_raw (a UTC day is settled for a chain once block_time is past its end; the ingesters read a block only once chains[].confirmations blocks follow it)';
ALTER TABLE {{db}}.chain_watermarks {{on_cluster}} COMMENT COLUMN chain_id 'Chain id; 101 for Solana';
ALTER TABLE {{db}}.chain_watermarks {{on_cluster}} COMMENT COLUMN block_number 'Newest ingested block number (Solana: slot)';
ALTER TABLE {{db}}.chain_watermarks {{on_cluster}} COMMENT COLUMN block_time 'Block time of the newest ingested block, UTC: the chain watermark';
