CREATE OR REPLACE VIEW {{db}}.fees_daily_by_kind {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  day Date COMMENT 'UTC day (days with any fee or claim)',
  management_usd Float64 COMMENT 'Management fee accrued, USD',
  performance_usd Float64 COMMENT 'Performance fee accrued, USD',
  instant_redemption_usd Float64 COMMENT 'Instant-redemption fees charged, USD',
  deposit_usd Float64 COMMENT 'Deposit fees charged, USD',
  redemption_usd Float64 COMMENT 'Redemption fees charged, USD',
  accrued_usd Float64 COMMENT 'Fees accrued or charged (the five kinds above, claims excluded: safe to sum), USD',
  claimed_usd Float64 COMMENT 'Fees claimed (paid out of accrued fees: never add to accrued_usd), USD',
  accrued_usd_e18 Int256 COMMENT 'accrued_usd exact, USD scaled by 1e18',
  claimed_usd_e18 Int256 COMMENT 'claimed_usd exact, USD scaled by 1e18'
) AS
SELECT vault, day,
  toFloat64(toString(reinterpret(sumIf(e18, kind = 'MANAGEMENT'), 'Decimal256(18)'))) AS management_usd,
  toFloat64(toString(reinterpret(sumIf(e18, kind = 'PERFORMANCE'), 'Decimal256(18)'))) AS performance_usd,
  toFloat64(toString(reinterpret(sumIf(e18, kind = 'INSTANT_REDEMPTION'), 'Decimal256(18)'))) AS instant_redemption_usd,
  toFloat64(toString(reinterpret(sumIf(e18, kind = 'DEPOSIT'), 'Decimal256(18)'))) AS deposit_usd,
  toFloat64(toString(reinterpret(sumIf(e18, kind = 'REDEMPTION'), 'Decimal256(18)'))) AS redemption_usd,
  sumIf(e18, kind != 'CLAIMED') AS accrued_usd_e18, sumIf(e18, kind = 'CLAIMED') AS claimed_usd_e18,
  toFloat64(toString(reinterpret(accrued_usd_e18, 'Decimal256(18)'))) AS accrued_usd,
  toFloat64(toString(reinterpret(claimed_usd_e18, 'Decimal256(18)'))) AS claimed_usd
FROM (SELECT CAST(vault, 'String') AS vault, day, CAST(kind, 'String') AS kind, toInt256(usd_e18) AS e18 FROM {{db}}.fees_daily)
GROUP BY vault, day
COMMENT 'Fees per vault and UTC day, one column per kind; claimed amounts in their own column so sum(accrued_usd) never double counts (the fees endpoint)';
