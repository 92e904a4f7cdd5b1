CREATE OR REPLACE VIEW {{db}}.vault_holders {{on_cluster}} AS
SELECT vault, uniqExact(holder) AS holders, count() AS holder_positions
FROM {{db}}.balances WHERE balance_raw > 0 GROUP BY vault
COMMENT 'Holders per vault: distinct addresses with a positive balance on any chain';
ALTER TABLE {{db}}.vault_holders {{on_cluster}} COMMENT COLUMN vault 'Vault slug';
ALTER TABLE {{db}}.vault_holders {{on_cluster}} COMMENT COLUMN holders 'Distinct addresses with a positive balance on any chain (numHolders)';
ALTER TABLE {{db}}.vault_holders {{on_cluster}} COMMENT COLUMN holder_positions '(chain, address) pairs with a positive balance';
