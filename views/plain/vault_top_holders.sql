-- The top holders of /vaults/holders (docs/architecture.md#endpoint-semantics), for every vault: its
-- 100 largest (chain, holder) balances ranked on one exact scale across chains, and the 100
-- largest of each of its chains (the answer with a chainId), with holderSince. views/settle.ts
-- stores it in metrics_top_holders; the API ranks the stored rows (api/read/holders-top.ts).
-- holderSince is computed for these rows only: for every holder it would replay every transfer.
CREATE OR REPLACE VIEW {{db}}.vault_top_holders {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain id; 101 for Solana',
  holder String COMMENT 'Holder address',
  balance_raw Int256 COMMENT 'Positive share balance, raw units of the chain',
  share_decimals UInt8 COMMENT 'Share decimals on the chain (vault_chain_decimals)',
  balance_e36 Int256 COMMENT 'Balance in 10^-36 shares (holder_values): the exact scale balances are ranked on across chains',
  since DateTime('UTC') COMMENT 'holderSince: block time at which the running balance last went from <= 0 to > 0'
) AS
WITH
  top AS (
    SELECT vault, chain_id, holder, balance_raw, share_decimals, balance_e36 FROM (
      SELECT vault, chain_id, holder, balance_raw, share_decimals, balance_e36,
        row_number() OVER (PARTITION BY vault ORDER BY balance_e36 DESC, chain_id, holder) AS rank_vault,
        row_number() OVER (PARTITION BY vault, chain_id ORDER BY balance_e36 DESC, holder) AS rank_chain
      FROM {{db}}.holder_values
    ) WHERE rank_vault <= 100 OR rank_chain <= 100
  ),
  since AS (
    SELECT vault, chain_id, holder, maxIf(block_time, running > 0 AND running - d <= 0) AS since
    FROM (
      SELECT vault, chain_id, holder, d, block_time,
        sum(d) OVER (PARTITION BY vault, chain_id, holder ORDER BY block_time, block_number, log_index, d
          ROWS UNBOUNDED PRECEDING) AS running
      FROM (
        SELECT CAST(vault, 'String') AS vault, chain_id, side.1 AS holder, side.2 AS d, block_time, block_number, log_index
        FROM {{db}}.transfers
        ARRAY JOIN [(from_address, -toInt256(amount)), (to_address, toInt256(amount))] AS side
        WHERE (vault, chain_id, side.1) IN (SELECT vault, chain_id, holder FROM top)
      )
    )
    GROUP BY vault, chain_id, holder
  )
SELECT t.vault AS vault, t.chain_id AS chain_id, t.holder AS holder, t.balance_raw AS balance_raw,
  t.share_decimals AS share_decimals, t.balance_e36 AS balance_e36, s.since AS since
FROM top AS t
LEFT JOIN since AS s ON s.vault = t.vault AND s.chain_id = t.chain_id AND s.holder = t.holder
COMMENT 'The 100 largest balances of each vault and of each of its chains, with holderSince (/vaults/holders)';
