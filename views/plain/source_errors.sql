CREATE OR REPLACE VIEW {{db}}.source_errors {{on_cluster}} AS
SELECT vault, chain_id, source, operation, message, code, ts FROM {{db}}.source_errors_raw FINAL
COMMENT 'Data-source failures per vault';
ALTER TABLE {{db}}.source_errors {{on_cluster}} COMMENT COLUMN vault 'Vault slug';
ALTER TABLE {{db}}.source_errors {{on_cluster}} COMMENT COLUMN chain_id 'Chain id, 0 when not chain-specific';
ALTER TABLE {{db}}.source_errors {{on_cluster}} COMMENT COLUMN source 'Data source (e.g. rpc:98866, attestation)';
ALTER TABLE {{db}}.source_errors {{on_cluster}} COMMENT COLUMN operation 'Operation that failed';
ALTER TABLE {{db}}.source_errors {{on_cluster}} COMMENT COLUMN message 'Error message';
ALTER TABLE {{db}}.source_errors {{on_cluster}} COMMENT COLUMN code 'Error code (e.g. TIMEOUT)';
ALTER TABLE {{db}}.source_errors {{on_cluster}} COMMENT COLUMN ts 'When it failed';
