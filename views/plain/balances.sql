CREATE OR REPLACE VIEW {{db}}.balances {{on_cluster}} AS
SELECT b.vault AS vault, b.chain_id AS chain_id, b.holder AS holder, b.token AS token, b.balance_raw AS balance_raw,
  r.decimals AS decimals, b.balance_raw / exp10(r.decimals) AS balance_float, b.last_change AS last_change
FROM (
  SELECT vault, chain_id, holder, any(token) AS token, sum(delta) AS balance_raw, max(last_change) AS last_change
  FROM {{db}}.balance_deltas GROUP BY vault, chain_id, holder HAVING balance_raw != 0
) AS b
LEFT JOIN {{db}}.vault_registry AS r ON r.slug = b.vault
COMMENT 'Current non-zero share balance per (vault, chain, holder); balance_raw in raw token units';
ALTER TABLE {{db}}.balances {{on_cluster}} COMMENT COLUMN vault 'Vault slug';
ALTER TABLE {{db}}.balances {{on_cluster}} COMMENT COLUMN chain_id 'Chain id; 101 for Solana';
ALTER TABLE {{db}}.balances {{on_cluster}} COMMENT COLUMN holder 'Holder address (EVM lower-case hex, Solana base58)';
ALTER TABLE {{db}}.balances {{on_cluster}} COMMENT COLUMN token 'Share token address or Solana mint';
ALTER TABLE {{db}}.balances {{on_cluster}} COMMENT COLUMN balance_raw 'Current balance, raw token units (non-zero)';
ALTER TABLE {{db}}.balances {{on_cluster}} COMMENT COLUMN decimals 'Vault share decimals from the registry (decimalsOverride not applied: see vault_chain_decimals)';
ALTER TABLE {{db}}.balances {{on_cluster}} COMMENT COLUMN balance_float 'balance_raw / 10^decimals, tokens (convenience, inexact)';
ALTER TABLE {{db}}.balances {{on_cluster}} COMMENT COLUMN last_change 'Block time of the latest transfer touching this balance, UTC';
