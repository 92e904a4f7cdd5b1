-- The pending redemptions' value and the shortfall of each day of vault_liquidity_daily's grid.
-- The pending redemptions of a day are, per chain, the AtomicQueue requests open at its as_of
-- (their current state, from pending_redemptions, whose deadline is after as_of) and the ERC-7540
-- controllers' pending shares at as_of (erc7540_redemptions_daily), valued at the current share
-- price and truncated once per chain; the AtomicQueue's come per vault as one array (chain,
-- deadline, shares, share decimals) that each day filters.
CREATE OR REPLACE VIEW {{db}}.pending_redemptions_daily {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  day Date COMMENT 'UTC day (the days of vault_liquidity_daily)',
  as_of DateTime('UTC') COMMENT 'Time the redemptions and the liquid funds are taken at: the end of the day, now for today',
  pending_redemptions_usd_e18 Int256 COMMENT 'USD scaled by 1e18 of the redemptions pending at as_of (AtomicQueue: not filled or cancelled now, deadline after as_of; ERC-7540: pendingRedeemRequest at as_of), at the current share price, truncated once per chain',
  pending_redemptions_usd Float64 COMMENT 'pendingRedemptionsValue at as_of, USD',
  liquid_funds_usd_e18 Int256 COMMENT 'Liquid funds of the day, USD scaled by 1e18 (vault_liquidity_daily)',
  shortfall_usd_e18 Int256 COMMENT 'max(0, pending_redemptions_usd_e18 - liquid_funds_usd_e18), USD scaled by 1e18',
  shortfall_usd Float64 COMMENT 'shortfall, USD'
) AS
SELECT g.vault AS vault, g.day AS day, g.as_of AS as_of, g.liquid_funds_usd_e18 AS liquid_funds_usd_e18,
  -- (chain, shares, share decimals) of what is pending at as_of, of both kinds of queue
  arrayConcat(arrayMap(q -> (q.1, q.3, q.4), arrayFilter(q -> q.2 > toUInt32(g.as_of), p.reqs)), e.pending) AS open_reqs,
  arraySum(arrayMap(c -> intDiv(u.share_usd_e18 * arraySum(arrayMap(q -> q.2, arrayFilter(q -> q.1 = c, open_reqs))),
      toInt256(concat('1', repeat('0', arrayFirst(q -> q.1 = c, open_reqs).3)))),
    arrayDistinct(arrayMap(q -> q.1, open_reqs)))) AS pending_redemptions_usd_e18,
  toFloat64(toString(reinterpret(pending_redemptions_usd_e18, 'Decimal256(18)'))) AS pending_redemptions_usd,
  greatest(pending_redemptions_usd_e18 - g.liquid_funds_usd_e18, toInt256(0)) AS shortfall_usd_e18,
  toFloat64(toString(reinterpret(shortfall_usd_e18, 'Decimal256(18)'))) AS shortfall_usd
FROM (SELECT vault, day, as_of, liquid_funds_usd_e18 FROM {{db}}.vault_liquidity_daily) AS g
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
COMMENT 'Per vault and UTC day: the value of the redemptions pending at its end (now for today) and the shortfall against its liquid funds (docs/architecture.md#units-and-formulas); AtomicQueue requests are their current state (one filled later is not counted on earlier days), ERC-7540 ones their state at the day''s end';
