CREATE OR REPLACE VIEW {{db}}.fees {{on_cluster}} AS
SELECT * EXCEPT (ver, removed) FROM {{db}}.fees_raw FINAL WHERE removed = 0
COMMENT 'Fee accruals and claims on the canonical chain';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN event_id 'Natural identity chainId:blockHash:logIndex';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN chain_id 'Chain id';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN block_number 'Block number';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN block_hash 'Block hash';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN block_time 'Block timestamp';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN tx_hash 'Transaction hash';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN log_index 'Log index';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN vault 'Vault slug';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN kind 'MANAGEMENT, PERFORMANCE, INSTANT_REDEMPTION, DEPOSIT, REDEMPTION, CLAIMED';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN token 'Fee token';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN amount 'Fee amount, raw units';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN decimals 'Fee token decimals';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN usd_price 'USD price of the fee token at the event';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN usd_e18 'Exact USD value in units of 1e-18 USD (amount * price / 10^decimals)';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN ingested_at 'When the consumer stored the row';
