-- Every holder balance's value, exact Int256 USD scaled by 1e18; balances on the common
-- 10^-36 token scale the API ranks and sums cross-chain balances on.
CREATE OR REPLACE VIEW {{db}}.holder_values {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain id; 101 for Solana',
  holder String COMMENT 'Holder address',
  balance_raw Int256 COMMENT 'Positive share balance, raw units of the chain',
  share_decimals UInt8 COMMENT 'Share decimals on the chain (vault_chain_decimals)',
  balance_e36 Int256 COMMENT 'Balance in 10^-36 shares (balance_raw * 10^(36 - share_decimals)): one exact scale across chains, for ranking and summing',
  balance Float64 COMMENT 'Balance, decimal-adjusted shares',
  value_usd_e18 Int256 COMMENT 'USD value of the balance, scaled by 1e18: balance_e36 * share_usd_e18 / 1e36 (truncated)',
  value_usd Float64 COMMENT 'USD value of the balance at the current share price'
) AS
SELECT b.vault AS vault, b.chain_id AS chain_id, b.holder AS holder, b.bal AS balance_raw, d.share_decimals AS share_decimals,
  balance_raw * toInt256(concat('1', repeat('0', 36 - share_decimals))) AS balance_e36,
  toFloat64(toString(reinterpret(intDiv(balance_e36, toInt256('1000000000000000000')), 'Decimal256(18)'))) AS balance,
  intDiv(balance_e36 * u.share_usd_e18, toInt256(concat('1', repeat('0', 36)))) AS value_usd_e18,
  toFloat64(toString(reinterpret(value_usd_e18, 'Decimal256(18)'))) AS value_usd
FROM (
  SELECT CAST(vault, 'String') AS vault, chain_id, holder, sum(delta) AS bal FROM {{db}}.balance_deltas
  GROUP BY vault, chain_id, holder HAVING bal > 0
) AS b
INNER JOIN {{db}}.vault_chain_decimals AS d ON d.vault = b.vault AND d.chain_id = b.chain_id
INNER JOIN {{db}}.vault_share_usd_current AS u ON u.vault = b.vault
COMMENT 'Every positive (vault, chain, holder) balance with its USD value at the current share price (/vaults/holders)';
