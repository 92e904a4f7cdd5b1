-- Top 20 holders per vault across chains, with their USD value at the current share price.
SELECT b.vault AS vault, b.holder AS holder,
  sum(b.balance_raw / exp10(d.share_decimals)) AS shares,
  sum(b.balance_raw / exp10(d.share_decimals)) * any(p.price) * toFloat64(any(r.base_asset_usd_price)) AS value_usd,
  groupArray(b.chain_id) AS chains
FROM vaultstream.balances AS b
INNER JOIN vaultstream.vault_chain_decimals AS d ON d.vault = b.vault AND d.chain_id = b.chain_id
INNER JOIN vaultstream.vault_price_current AS p ON p.vault = b.vault
INNER JOIN vaultstream.vault_registry AS r ON r.slug = b.vault
WHERE b.balance_raw > 0
GROUP BY vault, holder
ORDER BY vault, value_usd DESC
LIMIT 20 BY vault
