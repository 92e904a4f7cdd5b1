-- Holder growth per vault, chain and UTC day: holders at the end of the day and the change
-- since the day before.
SELECT vault, chain_id, day, end AS holders,
  end - lagInFrame(end, 1, 0) OVER (PARTITION BY vault, chain_id ORDER BY day
    ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS change
FROM vaultstream.holder_history_daily
ORDER BY vault, chain_id, day
