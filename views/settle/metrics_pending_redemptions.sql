-- metrics_pending_redemptions (views/migrations/021_metrics_pending.sql): the unfilled,
-- uncancelled redemption requests with their share price, the rows of pending_redemptions, by
-- the table's column names.
--
-- Inputs: redemptions, rates, registry
-- A redemption event opens, changes or closes a request; a rate changes the share price; a
-- registry entry (decimals, queues) the whole vault.
--
-- Parameters: {vaults:Array(String)} the dirty vaults (their rows are rewritten whole).
WITH {vaults:Array(String)} AS vaults
SELECT * FROM {{db}}.pending_redemptions WHERE has(vaults, vault)
