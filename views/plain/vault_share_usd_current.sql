-- The share's current USD value (rate x base-asset USD price), an exact Int256 scaled by 1e18.
CREATE OR REPLACE VIEW {{db}}.vault_share_usd_current {{on_cluster}} (
  vault String COMMENT 'Vault slug (every registered vault)',
  chain_id UInt32 COMMENT 'Price chain of the rate used (vault_price_current.chain_id); 0 when the vault has no rate yet',
  rate_raw UInt256 COMMENT 'Latest accountant rate on the price chain, base-asset raw units (0 without a rate)',
  rate_decimals UInt8 COMMENT 'Decimals of rate_raw',
  base_asset_usd_e18 Int256 COMMENT 'Configured USD price of the base asset, scaled by 1e18',
  share_usd_e18 Int256 COMMENT 'USD value of one whole share, scaled by 1e18: rate_raw * base_asset_usd_e18 / 10^rate_decimals (truncated); 0 without a rate',
  share_usd Float64 COMMENT 'USD value of one whole share (current share price times the base asset USD price)'
) AS
SELECT CAST(r.slug, 'String') AS vault, if(c.found = 1, c.chain_id, toUInt32(0)) AS chain_id,
  if(c.found = 1, c.rate_raw, toUInt256(0)) AS rate_raw, if(c.found = 1, c.rate_decimals, toUInt8(0)) AS rate_decimals,
  toInt256(reinterpretAsInt128(r.base_asset_usd_price)) AS base_asset_usd_e18,
  intDiv(toInt256(rate_raw) * base_asset_usd_e18, toInt256(concat('1', repeat('0', rate_decimals)))) AS share_usd_e18,
  toFloat64(toString(reinterpret(share_usd_e18, 'Decimal256(18)'))) AS share_usd
FROM {{db}}.vault_registry AS r
LEFT JOIN (SELECT vault, chain_id, rate_raw, rate_decimals, toUInt8(1) AS found FROM {{db}}.vault_price_current) AS c
  ON c.vault = r.slug
COMMENT 'Current USD value of one share per vault (holder values of /vaults/holders and /token-holders)';
