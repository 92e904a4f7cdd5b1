CREATE OR REPLACE VIEW {{db}}.flows_chain_daily {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain id of the deposits and withdrawals',
  day Date COMMENT 'UTC day',
  deposits UInt64 COMMENT 'Number of DEPOSIT events',
  withdrawals UInt64 COMMENT 'Number of WITHDRAW and INSTANT_REDEEM events',
  deposits_usd_e18 Int256 COMMENT 'Assets deposited, USD scaled by 1e18 (assets at the base asset USD price)',
  withdrawals_usd_e18 Int256 COMMENT 'Assets withdrawn (WITHDRAW and INSTANT_REDEEM), USD scaled by 1e18',
  deposits_usd Float64 COMMENT 'Assets deposited, USD',
  withdrawals_usd Float64 COMMENT 'Assets withdrawn, USD'
) AS
SELECT vault, chain_id, day, sum(n_dep) AS deposits, sum(n_wd) AS withdrawals,
  sum(dep_e18) AS deposits_usd_e18, sum(wd_e18) AS withdrawals_usd_e18,
  toFloat64(toString(reinterpret(deposits_usd_e18, 'Decimal256(18)'))) AS deposits_usd,
  toFloat64(toString(reinterpret(withdrawals_usd_e18, 'Decimal256(18)'))) AS withdrawals_usd
FROM (
  SELECT CAST(t.vault, 'String') AS vault, t.chain_id AS chain_id, toDate(t.block_time) AS day,
    countIf(t.kind = 'DEPOSIT') AS n_dep, countIf(t.kind != 'DEPOSIT') AS n_wd,
    intDiv(toInt256(reinterpretAsInt128(any(r.base_asset_usd_price))) * toInt256(sumIf(t.assets, t.kind = 'DEPOSIT')),
      toInt256(concat('1', repeat('0', t.assets_decimals)))) AS dep_e18,
    intDiv(toInt256(reinterpretAsInt128(any(r.base_asset_usd_price))) * toInt256(sumIf(t.assets, t.kind != 'DEPOSIT')),
      toInt256(concat('1', repeat('0', t.assets_decimals)))) AS wd_e18
  FROM {{db}}.transactions AS t INNER JOIN {{db}}.vault_registry AS r ON r.slug = t.vault
  WHERE t.kind IN ('DEPOSIT', 'WITHDRAW', 'INSTANT_REDEEM')
  GROUP BY vault, chain_id, day, t.assets_decimals
)
GROUP BY vault, chain_id, day
COMMENT 'Deposits and withdrawals per vault, chain and UTC day in USD (assets valued at the configured base asset USD price; volume_daily per chain)';
