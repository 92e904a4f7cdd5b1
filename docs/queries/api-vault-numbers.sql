-- The numbers of /vaults, /vaults/{slug} and /vaults/{slug}/details-lite for one vault
-- ({slug:String}) at the clock {now:UInt32} (Unix seconds; use toUInt32(now()) for "now").
-- test/integration/views-parity.test.ts runs this text and compares it with the API.
WITH
  toDateTime({now:UInt32}, 'UTC') AS at,
  toDate(at) AS today,
  settle AS (
    SELECT s.vault AS vault, toDate(least(at, s.watermark)) - 1 AS last_settled FROM vaultstream.vault_settlement AS s
  ),
  volume AS (
    -- volume24h: assets of the last 24 h per asset decimals at the base asset USD price, one truncation per decimals
    SELECT vault, sum(usd_e18) AS usd_e18 FROM (
      SELECT toString(t.vault) AS vault,
        intDiv(toInt256(reinterpretAsInt128(any(r.base_asset_usd_price))) * toInt256(sum(t.assets)),
          toInt256(concat('1', repeat('0', t.assets_decimals)))) AS usd_e18
      FROM vaultstream.transactions AS t INNER JOIN vaultstream.vault_registry AS r ON r.slug = t.vault
      WHERE t.kind IN ('DEPOSIT', 'WITHDRAW', 'INSTANT_REDEEM') AND t.block_time > at - INTERVAL 1 DAY AND t.block_time <= at
      GROUP BY vault, t.assets_decimals
    ) GROUP BY vault
  ),
  pending AS (
    -- pending redemptions: open at the clock, one truncation per chain as the API does
    SELECT vault, sum(shares_e18) AS shares_e18, sum(value_e18) AS value_e18 FROM (
      SELECT vault, chain_id, any(share_decimals) AS dec, any(share_usd_e18) AS share_usd,
        toInt256(sum(shares_raw)) * toInt256(concat('1', repeat('0', 18 - dec))) AS shares_e18,
        intDiv(share_usd * toInt256(sum(shares_raw)), toInt256(concat('1', repeat('0', dec)))) AS value_e18
      FROM vaultstream.pending_redemptions WHERE deadline > at GROUP BY vault, chain_id
    ) GROUP BY vault
  )
SELECT r.slug AS vault,
  ifNull(t.tvl_usd, 0) AS tvl,
  ifNull(t.tvl_30d_change_pct, 0) AS tvl30DayChange,
  toFloat64(toString(reinterpret(ifNull(v.usd_e18, toInt256(0)), 'Decimal256(18)'))) AS volume24h,
  if(n.day = toDate(0), NULL, n.rolling7d) AS apy_rolling7d,
  if(n.day = toDate(0), NULL, n.rolling30d) AS apy_rolling30d,
  if(n.day = toDate(0), NULL, n.sec30d) AS apy_sec30d,
  ifNull(c.price, 0) AS tokenPrice,
  toUInt32(c.updated_at) AS tokenPriceUpdatedAtEpoch,
  -- liquidFunds and liquidFundsRange: today's vault_liquidity_daily row (snapshots; not liveLiquidity)
  ifNull(l.liquid_funds_usd, 0) AS liquidFunds,
  ifNull(l.liquid_funds_range_pct, 0) AS liquidFundsRange,
  ifNull(h.holders, 0) AS holders,
  toFloat64(toString(reinterpret(ifNull(p.shares_e18, toInt256(0)), 'Decimal256(18)'))) AS pendingRedemptions,
  toFloat64(toString(reinterpret(ifNull(p.value_e18, toInt256(0)), 'Decimal256(18)'))) AS pendingRedemptionsValue,
  -- shortfall: the requests open at the clock against today's liquid funds
  toFloat64(toString(reinterpret(greatest(ifNull(p.value_e18, toInt256(0)) - ifNull(l.liquid_funds_usd_e18, toInt256(0)),
    toInt256(0)), 'Decimal256(18)'))) AS shortfall
FROM vaultstream.vault_registry AS r
LEFT JOIN vaultstream.vault_tvl_daily AS t ON t.vault = r.slug AND t.day = today
LEFT JOIN volume AS v ON v.vault = r.slug
LEFT JOIN settle AS st ON st.vault = r.slug
LEFT JOIN vaultstream.vault_price_current AS c ON c.vault = r.slug
-- details apy / VaultInfo sec30d: navApy of the latest settled day on the price chain
LEFT JOIN vaultstream.nav_apy_daily AS n ON n.vault = r.slug AND n.chain_id = c.chain_id AND n.day = st.last_settled
LEFT JOIN vaultstream.vault_liquidity_daily AS l ON l.vault = r.slug AND l.day = today
LEFT JOIN vaultstream.vault_holders AS h ON h.vault = r.slug
LEFT JOIN pending AS p ON p.vault = r.slug
WHERE r.slug = {slug:String}
