-- metrics_top_holders (views/migrations/024_metrics_holders.sql): the 100 largest balances of each
-- vault and of each of its chains with holderSince, the rows of vault_top_holders: the ranked
-- balances of vault_top_balances (every current balance of the vault, no transfer replayed) with
-- the holderSince metrics_holder_since.sql stored just before.
--
-- Inputs: transfers, registry
-- A transfer changes the balances; a registry entry (chains, decimals) the scale they are ranked
-- on. Not the rates: holder_values joins vault_share_usd_current, which has a row for every
-- registered vault with or without a rate, and the ranked balances do not use its value.
--
-- Parameters: {vaults:Array(String)} the dirty vaults (their rows are rewritten whole).
WITH {vaults:Array(String)} AS vaults
SELECT t.*, s.since AS since
FROM (SELECT * FROM {{db}}.vault_top_balances WHERE has(vaults, vault)) AS t
LEFT JOIN (
  SELECT toString(vault) AS vault, chain_id, holder, since FROM {{db}}.metrics_holder_since FINAL WHERE has(vaults, vault)
) AS s ON s.vault = t.vault AND s.chain_id = t.chain_id AND s.holder = t.holder
