-- Fees per vault and month by kind (USD); claims in their own column, so the accrued total
-- never counts a fee twice.
SELECT vault, toStartOfMonth(day) AS month,
  sum(management_usd) AS management, sum(performance_usd) AS performance,
  sum(instant_redemption_usd) AS instant_redemption, sum(deposit_usd) AS deposit, sum(redemption_usd) AS redemption,
  sum(accrued_usd) AS accrued_total, sum(claimed_usd) AS claimed
FROM vaultstream.fees_daily_by_kind
GROUP BY vault, month
ORDER BY vault, month
