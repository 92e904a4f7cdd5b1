-- TVL, liquid funds, liquidFundsRange, the pending redemptions' value and the shortfall of each
-- day in one row (the API reads it for the day of its clock). The day grid (TVL FULL JOIN
-- liquid funds) is computed once. The pending redemptions of a day are, per chain, the
-- AtomicQueue requests open at its as_of (their current state, from pending_redemptions, whose
-- deadline is after as_of) and the ERC-7540 controllers' pending shares at as_of
-- (erc7540_redemptions_daily), valued at the current share price and truncated once per chain.
CREATE OR REPLACE VIEW {{db}}.vault_liquidity_daily {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  day Date COMMENT 'UTC day: the days of vault_tvl_daily and of liquid_funds_daily',
  as_of DateTime('UTC') COMMENT 'Time the liquid funds and the open redemptions are taken at: the end of the day, now for today',
  tvl_usd_e18 Int256 COMMENT 'TVL at the end of the day, USD scaled by 1e18 (vault_tvl_daily; 0 without supply)',
  tvl_usd Float64 COMMENT 'TVL, USD (details tvl)',
  tvl_30d_change_pct Float64 COMMENT 'tvl30DayChange, percent (vault_tvl_daily; 0 without supply)',
  liquid_funds_usd_e18 Int256 COMMENT 'Liquid funds, USD scaled by 1e18 (liquid_funds_daily; 0 without snapshots)',
  liquid_funds_usd Float64 COMMENT 'liquidFunds, USD',
  liquid_funds_range_pct Float64 COMMENT 'liquidFundsRange, percent: liquid_funds_usd_e18 / tvl_usd_e18 * 100 (quotient truncated at 1e-18), 0 when the TVL is 0',
  pending_redemptions_usd_e18 Int256 COMMENT 'USD scaled by 1e18 of the redemptions pending at as_of (AtomicQueue: not filled or cancelled now, deadline after as_of; ERC-7540: pendingRedeemRequest at as_of), at the current share price, truncated once per chain',
  pending_redemptions_usd Float64 COMMENT 'pendingRedemptionsValue at as_of, USD',
  shortfall_usd_e18 Int256 COMMENT 'max(0, pending_redemptions_usd_e18 - liquid_funds_usd_e18), USD scaled by 1e18',
  shortfall_usd Float64 COMMENT 'shortfall, USD'
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
    AS liquid_funds_range_pct,
  -- (chain, shares, share decimals) of what is pending at as_of, of both kinds of queue
  arrayConcat(arrayMap(q -> (q.1, q.3, q.4), arrayFilter(q -> q.2 > g.t_as_of, p.reqs)), e.pending) AS open_reqs,
  arraySum(arrayMap(c -> intDiv(u.share_usd_e18 * arraySum(arrayMap(q -> q.2, arrayFilter(q -> q.1 = c, open_reqs))),
      toInt256(concat('1', repeat('0', arrayFirst(q -> q.1 = c, open_reqs).3)))),
    arrayDistinct(arrayMap(q -> q.1, open_reqs)))) AS pending_redemptions_usd_e18,
  toFloat64(toString(reinterpret(pending_redemptions_usd_e18, 'Decimal256(18)'))) AS pending_redemptions_usd,
  greatest(pending_redemptions_usd_e18 - g.liquid_funds_usd_e18, toInt256(0)) AS shortfall_usd_e18,
  toFloat64(toString(reinterpret(shortfall_usd_e18, 'Decimal256(18)'))) AS shortfall_usd
FROM g
LEFT JOIN (
  SELECT vault, groupArray((chain_id, toUInt32(deadline), toInt256(shares_raw), share_decimals)) AS reqs
  FROM {{db}}.pending_redemptions WHERE queue_kind = 'atomic_queue' GROUP BY vault
) AS p ON p.vault = g.vault
LEFT JOIN (
  SELECT x.vault AS vault, x.day AS day, groupArray((x.chain_id, x.shares, d.share_decimals)) AS pending
  FROM (
    SELECT vault, day, chain_id, sum(pending_shares) AS shares FROM {{db}}.erc7540_redemptions_daily
    GROUP BY vault, day, chain_id HAVING shares > 0
  ) AS x
  LEFT JOIN {{db}}.vault_chain_decimals AS d ON d.vault = x.vault AND d.chain_id = x.chain_id
  GROUP BY x.vault, x.day
) AS e ON e.vault = g.vault AND e.day = g.day
LEFT JOIN (SELECT vault, share_usd_e18 FROM {{db}}.vault_share_usd_current) AS u ON u.vault = g.vault
COMMENT 'Per vault and UTC day: TVL, liquid funds, liquidFundsRange, the open redemptions value and the shortfall (details; docs/architecture.md#units-and-formulas); AtomicQueue requests are their current state (one filled later is not counted on earlier days), ERC-7540 ones their state at the day''s end';
