CREATE OR REPLACE VIEW {{db}}.liquid_funds_daily {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  day Date COMMENT 'UTC day',
  as_of DateTime('UTC') COMMENT 'Time the snapshots are read as of: the end of the day, now for today',
  liquid_funds_usd_e18 Int256 COMMENT 'USD value of the configured liquid assets held, scaled by 1e18',
  liquid_funds_usd Float64 COMMENT 'liquidFunds, USD (performance-history liquidFunds; today: details liquidFunds)'
) AS
SELECT vault, day, max(as_of) AS as_of, sum(usd_e18) AS liquid_funds_usd_e18,
  toFloat64(toString(reinterpret(liquid_funds_usd_e18, 'Decimal256(18)'))) AS liquid_funds_usd
FROM {{db}}.liquid_funds_asset_daily GROUP BY vault, day
COMMENT 'Liquid funds per vault and UTC day: the sum of liquid_funds_asset_daily';
