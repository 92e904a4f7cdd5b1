CREATE OR REPLACE VIEW {{db}}.role_updates {{on_cluster}} AS
SELECT * EXCEPT (ver, removed) FROM {{db}}.roles_raw FINAL WHERE removed = 0
COMMENT 'UserRoleUpdated events on the canonical chain';
ALTER TABLE {{db}}.role_updates {{on_cluster}} COMMENT COLUMN event_id 'Natural identity chainId:blockHash:logIndex';
ALTER TABLE {{db}}.role_updates {{on_cluster}} COMMENT COLUMN chain_id 'Chain id';
ALTER TABLE {{db}}.role_updates {{on_cluster}} COMMENT COLUMN block_number 'Block number';
ALTER TABLE {{db}}.role_updates {{on_cluster}} COMMENT COLUMN block_hash 'Block hash';
ALTER TABLE {{db}}.role_updates {{on_cluster}} COMMENT COLUMN block_time 'Block timestamp';
ALTER TABLE {{db}}.role_updates {{on_cluster}} COMMENT COLUMN tx_hash 'Transaction hash';
ALTER TABLE {{db}}.role_updates {{on_cluster}} COMMENT COLUMN log_index 'Log index';
ALTER TABLE {{db}}.role_updates {{on_cluster}} COMMENT COLUMN vault 'Vault slug';
ALTER TABLE {{db}}.role_updates {{on_cluster}} COMMENT COLUMN authority 'RolesAuthority address';
ALTER TABLE {{db}}.role_updates {{on_cluster}} COMMENT COLUMN user 'Account whose role changed';
ALTER TABLE {{db}}.role_updates {{on_cluster}} COMMENT COLUMN role 'Role id';
ALTER TABLE {{db}}.role_updates {{on_cluster}} COMMENT COLUMN enabled '1 = granted, 0 = revoked';
ALTER TABLE {{db}}.role_updates {{on_cluster}} COMMENT COLUMN ingested_at 'When the consumer stored the row';
