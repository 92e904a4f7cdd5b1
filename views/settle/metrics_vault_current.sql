-- metrics_vault_current (views/migrations/018_metrics_tables.sql): per vault its current price
-- (vault_price_current) and holder count (vault_holders); a vault with one of them.
--
-- Inputs: rates, transfers, registry
-- A rate changes the price, a transfer the holders, a registry entry (the price chain) both.
--
-- Parameters: {vaults:Array(String)} the dirty vaults (their rows are rewritten whole).
WITH {vaults:Array(String)} AS vaults
SELECT vault, max(has_price) AS has_price, max(chain_id) AS chain_id, max(rate_raw) AS rate_raw,
  max(rate_decimals) AS rate_decimals, max(updated_at) AS updated_at, max(holders) AS holders
FROM (
  SELECT vault, toUInt8(1) AS has_price, chain_id, rate_raw, rate_decimals, updated_at, toUInt64(0) AS holders
  FROM {{db}}.vault_price_current WHERE has(vaults, vault)
  UNION ALL
  SELECT toString(vault), 0, 0, toUInt256(0), 0, toDateTime(0, 'UTC'), holders FROM {{db}}.vault_holders
  WHERE has(vaults, vault)
) GROUP BY vault
