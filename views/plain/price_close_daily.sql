CREATE OR REPLACE VIEW {{db}}.price_close_daily {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain id of the accountant rate',
  day Date COMMENT 'UTC day',
  close_rate UInt256 COMMENT 'Last rate at or before the end of the day (carried forward), base-asset raw units',
  rate_decimals UInt8 COMMENT 'Decimals of close_rate',
  price_e18 Int256 COMMENT 'Close share price in the base asset, scaled by 1e18',
  price Float64 COMMENT 'Close share price in the base asset, decimal-adjusted (performance-history price on the price chain)',
  rate_updated_at DateTime('UTC') COMMENT 'Block time of the last rate update on or before the day, UTC'
) AS
SELECT CAST(vault, 'String') AS vault, chain_id, day, close_rate, rate_decimals,
  if(rate_decimals <= 18, toInt256(close_rate) * toInt256(concat('1', repeat('0', 18 - rate_decimals))),
    intDiv(toInt256(close_rate), toInt256(concat('1', repeat('0', rate_decimals - 18))))) AS price_e18,
  toFloat64(toString(reinterpret(price_e18, 'Decimal256(18)'))) AS price, rate_updated_at
FROM {{db}}.price_daily
COMMENT 'Daily close share price per (vault, chain, UTC day) from the vault first rate on that chain to today';
