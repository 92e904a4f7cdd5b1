CREATE OR REPLACE VIEW {{db}}.vault_volume_24h {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  volume_24h_usd_e18 Int256 COMMENT 'USD scaled by 1e18 of the DEPOSIT, WITHDRAW and INSTANT_REDEEM assets in (now - 24 h, now]',
  volume_24h_usd Float64 COMMENT 'volume24h, USD'
) AS
SELECT vault, sum(usd_e18) AS volume_24h_usd_e18, toFloat64(toString(reinterpret(volume_24h_usd_e18, 'Decimal256(18)'))) AS volume_24h_usd
FROM (
  SELECT CAST(t.vault, 'String') AS vault,
    intDiv(toInt256(reinterpretAsInt128(any(r.base_asset_usd_price))) * toInt256(sum(t.assets)),
      toInt256(concat('1', repeat('0', t.assets_decimals)))) AS usd_e18
  FROM {{db}}.transactions AS t INNER JOIN {{db}}.vault_registry AS r ON r.slug = t.vault
  WHERE t.kind IN ('DEPOSIT', 'WITHDRAW', 'INSTANT_REDEEM')
    AND t.block_time > now('UTC') - INTERVAL 1 DAY AND t.block_time <= now('UTC')
  GROUP BY vault, t.assets_decimals
)
GROUP BY vault
COMMENT 'volume24h per vault (vaults, details): assets moved in the last 24 hours, USD';
