-- The rows of /token-holders (every vault): one per (holder, token), the EVM share summed over
-- the EVM chains and the Solana mint apart, by USD value descending, ties by address and token.
-- test/integration/views-parity.test.ts runs this text and compares it with the API.
SELECT address, token AS tokenAddress, balance, value_usd AS value
FROM vaultstream.token_holder_values
ORDER BY value_usd_e18 DESC, address, token
