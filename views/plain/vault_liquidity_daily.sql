-- TVL, liquid funds and liquidFundsRange of each day in one row (the API reads it for the day of
-- its clock): the day grid of TVL FULL JOIN liquid funds. The pending redemptions of each day and
-- the shortfall are pending_redemptions_daily's (on this grid), apart so that the settle of these
-- columns does not evaluate the redemptions.
CREATE OR REPLACE VIEW {{db}}.vault_liquidity_daily {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  day Date COMMENT 'UTC day: the days of vault_tvl_daily and of liquid_funds_daily',
  as_of DateTime('UTC') COMMENT 'Time the liquid funds are taken at: the end of the day, now for today',
  tvl_usd_e18 Int256 COMMENT 'TVL at the end of the day, USD scaled by 1e18 (vault_tvl_daily; 0 without supply)',
  tvl_usd Float64 COMMENT 'TVL, USD (details tvl)',
  tvl_30d_change_pct Float64 COMMENT 'tvl30DayChange, percent (vault_tvl_daily; 0 without supply)',
  liquid_funds_usd_e18 Int256 COMMENT 'Liquid funds, USD scaled by 1e18 (liquid_funds_daily; 0 without snapshots)',
  liquid_funds_usd Float64 COMMENT 'liquidFunds, USD',
  liquid_funds_range_pct Float64 COMMENT 'liquidFundsRange, percent: liquid_funds_usd_e18 / tvl_usd_e18 * 100 (quotient truncated at 1e-18), 0 when the TVL is 0'
) AS
WITH g AS (
  SELECT if(t.vault != '', t.vault, l.vault) AS vault, if(t.vault != '', t.day, l.day) AS day,
    least(toUInt32(toDateTime(day, 'UTC')) + 86399, toUInt32(now('UTC'))) AS t_as_of,
    ifNull(t.tvl_usd_e18, toInt256(0)) AS tvl_usd_e18, ifNull(t.tvl_30d_change_pct, 0) AS tvl_30d_change_pct,
    ifNull(l.liquid_funds_usd_e18, toInt256(0)) AS liquid_funds_usd_e18
  FROM (SELECT vault, day, tvl_usd_e18, tvl_30d_change_pct FROM {{db}}.vault_tvl_daily) AS t
  FULL OUTER JOIN (SELECT vault, day, liquid_funds_usd_e18 FROM {{db}}.liquid_funds_daily) AS l
    ON l.vault = t.vault AND l.day = t.day
)
SELECT g.vault AS vault, g.day AS day, toDateTime(g.t_as_of, 'UTC') AS as_of, g.tvl_usd_e18 AS tvl_usd_e18,
  toFloat64(toString(reinterpret(g.tvl_usd_e18, 'Decimal256(18)'))) AS tvl_usd, g.tvl_30d_change_pct AS tvl_30d_change_pct,
  g.liquid_funds_usd_e18 AS liquid_funds_usd_e18,
  toFloat64(toString(reinterpret(g.liquid_funds_usd_e18, 'Decimal256(18)'))) AS liquid_funds_usd,
  if(g.tvl_usd_e18 = 0, 0,
    toFloat64(toString(reinterpret(intDiv(g.liquid_funds_usd_e18 * toInt256('1000000000000000000'), g.tvl_usd_e18), 'Decimal256(18)'))) * 100)
    AS liquid_funds_range_pct
FROM g
COMMENT 'Per vault and UTC day: TVL, liquid funds and liquidFundsRange (details; docs/architecture.md#units-and-formulas); the pending redemptions and the shortfall of each day are in pending_redemptions_daily';
