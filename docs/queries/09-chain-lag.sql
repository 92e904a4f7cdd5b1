-- Chain lag: how far each chain's watermark is behind now, and which vaults it holds back
-- (a day is settled for a vault only once all its chains are past the day's end).
SELECT w.chain_id AS chain_id, w.block_number AS block_number, w.block_time AS watermark,
  dateDiff('second', w.block_time, now('UTC')) AS lag_seconds,
  arrayFilter(v -> v != '', groupArray(if(s.watermark = w.block_time, s.vault, ''))) AS holds_back
FROM vaultstream.chain_watermarks AS w
LEFT JOIN (SELECT vault, arrayJoin(chains) AS chain_id, watermark FROM vaultstream.vault_settlement) AS s
  ON s.chain_id = w.chain_id
GROUP BY chain_id, block_number, watermark
ORDER BY lag_seconds DESC
