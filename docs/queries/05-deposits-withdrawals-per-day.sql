-- Deposits and withdrawals (incl. instant redemptions) per vault and UTC day, count and USD.
SELECT vault, day, deposits, deposits_usd, withdrawals, withdrawals_usd, deposits_usd - withdrawals_usd AS net_flow_usd
FROM vaultstream.volume_daily
ORDER BY vault, day
