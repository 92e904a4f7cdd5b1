-- Failed redemptions: queue requests still asking for shares after their deadline passed unfilled.
SELECT vault, chain_id, request_id, user, requested_at, deadline AS expires_at,
  amount AS shares_raw, min_price AS min_price_raw, want_decimals
FROM vaultstream.redemption_requests
WHERE state = 'expired' AND amount > 0
ORDER BY deadline DESC
