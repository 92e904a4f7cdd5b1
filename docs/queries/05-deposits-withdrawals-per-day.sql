-- Deposits and withdrawals (incl. instant redemptions) per vault, chain and UTC day, count and USD.
SELECT vault, chain_id, day, deposits, deposits_usd, withdrawals, withdrawals_usd, deposits_usd - withdrawals_usd AS net_flow_usd
FROM vaultstream.flows_chain_daily
ORDER BY vault, day, chain_id
