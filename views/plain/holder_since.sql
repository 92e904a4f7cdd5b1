-- holderSince (docs/architecture.md#endpoint-semantics) of every (vault, chain, holder) whose
-- balance ever went positive: the block time at which its running balance (its transfers in
-- block order, the sender's side before the receiver's in a transfer to itself) last went from
-- <= 0 to > 0. views/settle.ts stores it in metrics_holder_since for the holders whose transfers
-- changed (views/settle/metrics_holder_since.sql: from their balance on the day before the first
-- change on).
CREATE OR REPLACE VIEW {{db}}.holder_since {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain id; 101 for Solana',
  holder String COMMENT 'Holder address',
  since DateTime('UTC') COMMENT 'holderSince: block time at which the running balance last went from <= 0 to > 0'
) AS
SELECT vault, chain_id, holder, maxIf(block_time, running > 0 AND running - d <= 0) AS since
FROM (
  SELECT vault, chain_id, holder, d, block_time,
    sum(d) OVER (PARTITION BY vault, chain_id, holder ORDER BY block_time, block_number, log_index, d
      ROWS UNBOUNDED PRECEDING) AS running
  FROM (
    SELECT CAST(vault, 'String') AS vault, chain_id, side.1 AS holder, side.2 AS d, block_time, block_number, log_index
    FROM {{db}}.transfers
    ARRAY JOIN [(from_address, -toInt256(amount)), (to_address, toInt256(amount))] AS side
    WHERE side.1 NOT IN ('0x0000000000000000000000000000000000000000', '11111111111111111111111111111111')
  )
)
GROUP BY vault, chain_id, holder
HAVING countIf(running > 0 AND running - d <= 0) > 0
COMMENT 'holderSince of every (vault, chain, holder) whose balance ever went positive (/vaults/holders)';
