-- The 30-day look-back of tvl30DayChange is a window frame (RANGE 30 PRECEDING AND 30
-- PRECEDING), not a self-join.
CREATE OR REPLACE VIEW {{db}}.vault_tvl_daily {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  day Date COMMENT 'UTC day (days from the first supply change on any chain to today)',
  tvl_usd_e18 Int256 COMMENT 'TVL in USD scaled by 1e18: sum over chains of tvl_chain_daily.tvl_usd_e18',
  tvl_usd Float64 COMMENT 'TVL at the end of the day, USD (performance-history tvl; today: details tvl)',
  tvl_30d_ago_usd_e18 Int256 COMMENT 'TVL 30 days earlier, USD scaled by 1e18 (0 before the first supply)',
  tvl_30d_change_pct Float64 COMMENT 'tvl30DayChange, percent: (tvl / tvl 30 days ago - 1) * 100, 0 when there was no TVL 30 days ago'
) AS
SELECT t.vault AS vault, t.day AS day, t.tvl_usd_e18 AS tvl_usd_e18,
  toFloat64(toString(reinterpret(t.tvl_usd_e18, 'Decimal256(18)'))) AS tvl_usd,
  t.tvl_30 AS tvl_30d_ago_usd_e18,
  if(tvl_30d_ago_usd_e18 = 0, 0,
    (toFloat64(toString(reinterpret(intDiv(t.tvl_usd_e18 * toInt256('1000000000000000000'), tvl_30d_ago_usd_e18), 'Decimal256(18)'))) - 1)
      * 100) AS tvl_30d_change_pct
FROM (
  SELECT vault, day, tvl_usd_e18,
    sum(tvl_usd_e18) OVER (PARTITION BY vault ORDER BY toUInt32(day) RANGE BETWEEN 30 PRECEDING AND 30 PRECEDING) AS tvl_30
  FROM (SELECT vault, day, sum(tvl_usd_e18) AS tvl_usd_e18 FROM {{db}}.tvl_chain_daily GROUP BY vault, day)
) AS t
COMMENT 'Vault TVL per UTC day, every chain at its own price, and its 30-day change';
