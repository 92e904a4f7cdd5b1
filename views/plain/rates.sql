CREATE OR REPLACE VIEW {{db}}.rates {{on_cluster}} AS
SELECT * EXCEPT (ver, removed) FROM {{db}}.rates_raw FINAL WHERE removed = 0
COMMENT 'Exchange-rate updates and reads on the canonical chain';
ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN event_id 'Natural identity chainId:blockHash:logIndex';
ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN chain_id 'Chain id';
ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN block_number 'Block number';
ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN block_hash 'Block hash';
ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN block_time 'Block timestamp';
ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN tx_hash 'Transaction hash (reads: empty-tx marker)';
ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN log_index 'Log index';
ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN vault 'Vault slug';
ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN accountant 'Accountant address';
ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN rate 'Share price in base-asset raw units';
ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN rate_decimals 'Decimals of rate';
ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN source 'EVENT (ExchangeRateUpdated) or READ (getRate snapshot)';
ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN is_paused '1 when the accountant is paused after this update';
ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN ingested_at 'When the consumer stored the row';
