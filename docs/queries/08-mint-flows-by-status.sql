-- Solana mint flows by overall status: how many, and the oldest and newest activity.
SELECT overall_status, count() AS flows, min(created_at) AS first_created, max(updated_at) AS last_updated
FROM vaultstream.mint_flows
GROUP BY overall_status
ORDER BY flows DESC
