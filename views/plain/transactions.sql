-- Reads activity_by_time (migration 024: activity_raw's rows ordered by (vault, block_time)), so a
-- read of a vault's recent rows reads those rows only.
CREATE OR REPLACE VIEW {{db}}.transactions {{on_cluster}} AS
SELECT * EXCEPT (ver, removed) FROM {{db}}.activity_by_time FINAL WHERE removed = 0
COMMENT 'Deposits, withdrawals, redeem requests, instant redemptions and bridge moves on the canonical chain';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN event_id 'Natural identity chainId:blockHash:logIndex';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN chain_id 'Chain id';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN block_number 'Block number';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN block_hash 'Block hash';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN block_time 'Block timestamp';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN tx_hash 'Transaction hash';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN log_index 'Log index in the block';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN vault 'Vault slug';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN kind 'DEPOSIT, WITHDRAW, REDEEM_REQUEST, INSTANT_REDEEM, BRIDGE_IN, BRIDGE_OUT';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN user 'Account acting';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN shares 'Shares, raw units';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN shares_token 'Share token address';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN assets 'Assets, raw units';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN assets_token 'Asset token address';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN assets_decimals 'Decimals of the asset token';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN ingested_at 'When the consumer stored the row';
