-- The top holders of /vaults/holders (docs/architecture.md#endpoint-semantics), for every vault:
-- the balances of vault_top_balances with their holderSince (holder_since). views/settle.ts
-- stores it in metrics_top_holders (with holderSince from metrics_holder_since); the API ranks
-- the stored rows (api/read/holders-top.ts).
CREATE OR REPLACE VIEW {{db}}.vault_top_holders {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain id; 101 for Solana',
  holder String COMMENT 'Holder address',
  balance_raw Int256 COMMENT 'Positive share balance, raw units of the chain',
  share_decimals UInt8 COMMENT 'Share decimals on the chain (vault_chain_decimals)',
  balance_e36 Int256 COMMENT 'Balance in 10^-36 shares (holder_values): the exact scale balances are ranked on across chains',
  since DateTime('UTC') COMMENT 'holderSince: block time at which the balance last went from <= 0 to > 0'
) AS
SELECT t.vault AS vault, t.chain_id AS chain_id, t.holder AS holder, t.balance_raw AS balance_raw,
  t.share_decimals AS share_decimals, t.balance_e36 AS balance_e36, s.since AS since
FROM {{db}}.vault_top_balances AS t
LEFT JOIN {{db}}.holder_since AS s ON s.vault = t.vault AND s.chain_id = t.chain_id AND s.holder = t.holder
COMMENT 'The 100 largest balances of each vault and of each of its chains, with holderSince (/vaults/holders)';
