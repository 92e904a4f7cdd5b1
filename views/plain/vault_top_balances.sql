-- The balances /vaults/holders ranks (docs/architecture.md#endpoint-semantics), for every vault:
-- its 100 largest (chain, holder) balances ranked on one exact scale across chains, and the 100
-- largest of each of its chains (the answer with a chainId). vault_top_holders adds holderSince.
CREATE OR REPLACE VIEW {{db}}.vault_top_balances {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain id; 101 for Solana',
  holder String COMMENT 'Holder address',
  balance_raw Int256 COMMENT 'Positive share balance, raw units of the chain',
  share_decimals UInt8 COMMENT 'Share decimals on the chain (vault_chain_decimals)',
  balance_e36 Int256 COMMENT 'Balance in 10^-36 shares (holder_values): the exact scale balances are ranked on across chains'
) AS
SELECT vault, chain_id, holder, balance_raw, share_decimals, balance_e36 FROM (
  SELECT vault, chain_id, holder, balance_raw, share_decimals, balance_e36,
    row_number() OVER (PARTITION BY vault ORDER BY balance_e36 DESC, chain_id, holder) AS rank_vault,
    row_number() OVER (PARTITION BY vault, chain_id ORDER BY balance_e36 DESC, holder) AS rank_chain
  FROM {{db}}.holder_values
) WHERE rank_vault <= 100 OR rank_chain <= 100
COMMENT 'The 100 largest balances of each vault and of each of its chains (/vaults/holders)';
