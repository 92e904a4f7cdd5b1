CREATE OR REPLACE VIEW {{db}}.transfers {{on_cluster}} AS
SELECT * EXCEPT (ver, removed) FROM {{db}}.transfers_raw FINAL WHERE removed = 0
COMMENT 'Share-token transfers currently on the canonical chain';
ALTER TABLE {{db}}.transfers {{on_cluster}} COMMENT COLUMN event_id 'Natural identity chainId:blockHash:logIndex';
ALTER TABLE {{db}}.transfers {{on_cluster}} COMMENT COLUMN chain_id 'EVM chain id; 101 for Solana';
ALTER TABLE {{db}}.transfers {{on_cluster}} COMMENT COLUMN block_number 'Block number (Solana: slot)';
ALTER TABLE {{db}}.transfers {{on_cluster}} COMMENT COLUMN block_hash 'Block hash';
ALTER TABLE {{db}}.transfers {{on_cluster}} COMMENT COLUMN block_time 'Block timestamp';
ALTER TABLE {{db}}.transfers {{on_cluster}} COMMENT COLUMN tx_hash 'Transaction hash (Solana: signature)';
ALTER TABLE {{db}}.transfers {{on_cluster}} COMMENT COLUMN log_index 'Log index in the block';
ALTER TABLE {{db}}.transfers {{on_cluster}} COMMENT COLUMN transaction_index 'Index of the transaction in its block (EVM); -1 when unknown (Solana, transfers published before schema v2)';
ALTER TABLE {{db}}.transfers {{on_cluster}} COMMENT COLUMN vault 'Vault slug';
ALTER TABLE {{db}}.transfers {{on_cluster}} COMMENT COLUMN token 'Share token address (EVM) or mint (Solana)';
ALTER TABLE {{db}}.transfers {{on_cluster}} COMMENT COLUMN from_address 'Sender; zero address on mint';
ALTER TABLE {{db}}.transfers {{on_cluster}} COMMENT COLUMN to_address 'Receiver; zero address on burn';
ALTER TABLE {{db}}.transfers {{on_cluster}} COMMENT COLUMN amount 'Shares moved, raw token units';
ALTER TABLE {{db}}.transfers {{on_cluster}} COMMENT COLUMN ingested_at 'When the consumer stored the row';
