CREATE OR REPLACE VIEW {{db}}.role_assignments {{on_cluster}} AS
SELECT vault, chain_id, authority, user, role,
  argMax(enabled, (block_number, log_index)) AS enabled, max(block_time) AS updated_at
FROM {{db}}.roles_raw FINAL WHERE removed = 0
GROUP BY vault, chain_id, authority, user, role
COMMENT 'Latest role state per (vault, chain, user, role)';
ALTER TABLE {{db}}.role_assignments {{on_cluster}} COMMENT COLUMN vault 'Vault slug';
ALTER TABLE {{db}}.role_assignments {{on_cluster}} COMMENT COLUMN chain_id 'Chain id';
ALTER TABLE {{db}}.role_assignments {{on_cluster}} COMMENT COLUMN authority 'Authority contract address';
ALTER TABLE {{db}}.role_assignments {{on_cluster}} COMMENT COLUMN user 'Account';
ALTER TABLE {{db}}.role_assignments {{on_cluster}} COMMENT COLUMN role 'Role id (names: the vault role map in config)';
ALTER TABLE {{db}}.role_assignments {{on_cluster}} COMMENT COLUMN enabled '1 when the role is currently granted';
ALTER TABLE {{db}}.role_assignments {{on_cluster}} COMMENT COLUMN updated_at 'Block time of the latest update, UTC';
