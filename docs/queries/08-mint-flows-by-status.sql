-- Solana mint flows by vault and overall status: how many, the USDC burned, the step the open ones
-- wait on, and the oldest and newest activity.
SELECT vault, overall_status, count() AS flows, sum(amount) / 1e6 AS usdc_burned,
  groupUniqArrayIf(current_step, current_step != '') AS waiting_on,
  min(created_at) AS first_created, max(updated_at) AS last_updated
FROM vaultstream.mint_flows
GROUP BY vault, overall_status
ORDER BY vault, flows DESC
