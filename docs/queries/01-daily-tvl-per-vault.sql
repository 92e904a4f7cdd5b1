-- Daily TVL per vault (USD), every chain at its own close price, with the 30-day change.
SELECT vault, day, tvl_usd, tvl_30d_change_pct
FROM vaultstream.vault_tvl_daily
WHERE day >= today() - 400
ORDER BY vault, day
