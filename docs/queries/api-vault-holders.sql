-- The top holders of /vaults/holders for one vault ({slug:String}): its 100 largest (chain, holder)
-- balances ranked on one exact scale across chains (holder_values.balance_e36), with when that
-- balance last turned positive and the USD value the view gives it.
-- test/integration/views-parity.test.ts runs this text and compares it with the API.
WITH top AS (
  SELECT vault, chain_id, holder, balance_e36, balance, value_usd
  FROM vaultstream.holder_values WHERE vault = {slug:String}
  ORDER BY balance_e36 DESC, chain_id, holder
  LIMIT 100
),
since AS (
  -- holderSince: the block time at which the running balance last went from <= 0 to > 0
  SELECT chain_id, holder, maxIf(block_time, running > 0 AND running - d <= 0) AS since FROM (
    SELECT chain_id, holder, d, block_time,
      sum(d) OVER (PARTITION BY chain_id, holder ORDER BY block_time, block_number, log_index, d ROWS UNBOUNDED PRECEDING) AS running
    FROM (
      SELECT chain_id, side.1 AS holder, side.2 AS d, block_time, block_number, log_index
      FROM vaultstream.transfers
      ARRAY JOIN [(from_address, -toInt256(amount)), (to_address, toInt256(amount))] AS side
      WHERE vault = {slug:String} AND (chain_id, side.1) IN (SELECT chain_id, holder FROM top)
    )
  ) GROUP BY chain_id, holder
)
SELECT t.chain_id AS chainId, t.holder AS user, t.balance AS balance, toUInt32(s.since) AS holderSince,
  t.value_usd AS value, (SELECT holders FROM vaultstream.vault_holders WHERE vault = {slug:String}) AS totalHolders
FROM top AS t LEFT JOIN since AS s ON s.chain_id = t.chain_id AND s.holder = t.holder
ORDER BY t.balance_e36 DESC, t.chain_id, t.holder
