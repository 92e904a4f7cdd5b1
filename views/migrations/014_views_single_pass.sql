-- Faster forms of three views, same columns, types, comments and values (views-parity.test.ts;
-- bench/views.ts times them). ClickHouse inlines every reference to a CTE or a view, so a CTE
-- read twice is computed twice; these forms read each input once:
-- - tvl_chain_daily reads the daily closes once: per (vault, day) the closes of every chain
--   as an array, from which it takes the chain's own close, else the price chain's
--   (vault_price_current), instead of joining price_close_daily and vault_price_daily.
-- - vault_liquidity_daily computes its day grid (TVL FULL JOIN liquid funds) once: the open
--   redemptions come per vault as an array (chain, deadline, shares, share decimals) and each
--   day sums the requests whose deadline is after its as_of, truncating once per chain as before.
-- - composition_daily reads its yield-asset grid once (the prices are ASOF-joined to the
--   aggregated holdings: a yield asset without holdings had no row before either) and takes
--   each day's total held value with a window sum instead of re-computing the yield values.
-- Still plain views over FINAL reads: a retracted rate or snapshot disappears at once.

CREATE OR REPLACE VIEW {{db}}.tvl_chain_daily {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain id; 101 for Solana',
  day Date COMMENT 'UTC day',
  supply_raw Int256 COMMENT 'Share supply on the chain at the end of the day, raw units',
  share_decimals UInt8 COMMENT 'Share decimals on the chain',
  price_e18 Int256 COMMENT 'Close share price used (scaled by 1e18): the chain own close, else the price chain close (e.g. Solana); 0 when neither exists yet',
  price_source LowCardinality(String) COMMENT 'chain (own accountant close), price_chain (the vault price chain close) or none',
  base_asset_usd_e18 Int256 COMMENT 'Configured USD price of the base asset, scaled by 1e18',
  tvl_usd_e18 Int256 COMMENT 'TVL of the chain in USD scaled by 1e18: (price_e18 * base_asset_usd_e18 / 1e18) * supply_raw / 10^share_decimals',
  tvl_usd Float64 COMMENT 'TVL of the chain, USD'
) AS
SELECT s.vault AS vault, s.chain_id AS chain_id, s.day AS day, s.supply_raw AS supply_raw, d.share_decimals AS share_decimals,
  arrayFirstIndex(c -> c.1 = s.chain_id, cl.closes) AS own_i,
  if(pcur.found = 1, arrayFirstIndex(c -> c.1 = pcur.chain_id, cl.closes), 0) AS pc_i,
  multiIf(own_i > 0, cl.closes[own_i].2, pc_i > 0, cl.closes[pc_i].2, toInt256(0)) AS price_e18,
  toLowCardinality(multiIf(own_i > 0, 'chain', pc_i > 0, 'price_chain', 'none')) AS price_source,
  toInt256(reinterpretAsInt128(r.base_asset_usd_price)) AS base_asset_usd_e18,
  intDiv(intDiv(price_e18 * base_asset_usd_e18, toInt256('1000000000000000000')) * supply_raw,
    toInt256(concat('1', repeat('0', share_decimals)))) AS tvl_usd_e18,
  toFloat64(toString(reinterpret(tvl_usd_e18, 'Decimal256(18)'))) AS tvl_usd
FROM (SELECT toString(vault) AS vault, chain_id, day, toInt256(supply_raw) AS supply_raw FROM {{db}}.supply_daily) AS s
INNER JOIN {{db}}.vault_registry AS r ON r.slug = s.vault
LEFT JOIN {{db}}.vault_chain_decimals AS d ON d.vault = s.vault AND d.chain_id = s.chain_id
LEFT JOIN (SELECT vault, day, groupArray((chain_id, price_e18)) AS closes FROM {{db}}.price_close_daily GROUP BY vault, day) AS cl
  ON cl.vault = s.vault AND cl.day = s.day
LEFT JOIN (SELECT vault, chain_id, toUInt8(1) AS found FROM {{db}}.vault_price_current) AS pcur ON pcur.vault = s.vault
COMMENT 'TVL per (vault, chain, UTC day) at that chain''s own close price (DESIGN section 8 tvl); sum the chains with vault_tvl_daily';

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
  pending_redemptions_usd_e18 Int256 COMMENT 'USD scaled by 1e18 of the redemption requests pending at as_of (not filled or cancelled, deadline after as_of), at the current share price, truncated once per chain',
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
  arrayFilter(q -> q.2 > g.t_as_of, p.reqs) AS open_reqs,
  arraySum(arrayMap(c -> intDiv(p.share_usd_e18 * arraySum(arrayMap(q -> q.3, arrayFilter(q -> q.1 = c, open_reqs))),
      toInt256(concat('1', repeat('0', arrayFirst(q -> q.1 = c, open_reqs).4)))),
    arrayDistinct(arrayMap(q -> q.1, open_reqs)))) AS pending_redemptions_usd_e18,
  toFloat64(toString(reinterpret(pending_redemptions_usd_e18, 'Decimal256(18)'))) AS pending_redemptions_usd,
  greatest(pending_redemptions_usd_e18 - g.liquid_funds_usd_e18, toInt256(0)) AS shortfall_usd_e18,
  toFloat64(toString(reinterpret(shortfall_usd_e18, 'Decimal256(18)'))) AS shortfall_usd
FROM g
LEFT JOIN (
  SELECT vault, any(share_usd_e18) AS share_usd_e18,
    groupArray((chain_id, toUInt32(deadline), toInt256(shares_raw), share_decimals)) AS reqs
  FROM {{db}}.pending_redemptions GROUP BY vault
) AS p ON p.vault = g.vault
COMMENT 'Per vault and UTC day: TVL, liquid funds, liquidFundsRange, the open redemptions value and the shortfall (details; DESIGN section 8); the requests are their current state (a request filled later is not counted on earlier days)';

CREATE OR REPLACE VIEW {{db}}.composition_daily {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  day Date COMMENT 'UTC day, from the vault first COMPOSITION or chain-0 ASSET_PRICE snapshot to today',
  position UInt32 COMMENT 'Position of the item in the vault targetComposition (1-based; configured yield assets missing there follow it)',
  slug String COMMENT 'targetComposition item (yield asset) slug',
  snapshot_at DateTime('UTC') COMMENT 'Time of the latest snapshot giving the item at or before the end of the day (now for today): its COMPOSITION snapshot, or for a configured yield asset its chain-0 ASSET_PRICE',
  usd_price_e18 Int256 COMMENT 'Asset USD price scaled by 1e18: a yield asset close price (chain-0 ASSET_PRICE); else the COMPOSITION snapshot price, else the latest chain-0 ASSET_PRICE of the slug, else 0',
  apy7d_e18 Nullable(Int256) COMMENT 'Asset 7-day APY, percent scaled by 1e18: for a yield asset (P(d)/P(d-7) - 1) * 365/7 * 100 from its closes, null without P(d-7); else from the COMPOSITION snapshot (null when it has none)',
  apy30d_e18 Nullable(Int256) COMMENT 'Asset 30-day APY, percent scaled by 1e18: for a yield asset (P(d)/P(d-30) - 1) * 365/30 * 100, null without P(d-30); else from the COMPOSITION snapshot',
  weight_e18 Nullable(Int256) COMMENT 'compositionPct (weight), percent scaled by 1e18: for a yield asset held_usd_e18 over the USD of every yield asset and liquid asset held (0 when nothing is held); else the COMPOSITION snapshot weight (null when it has none)',
  held_usd_e18 Nullable(Int256) COMMENT 'Yield asset: USD value held over every chain at the close, scaled by 1e18 (sum of ASSET_BALANCE amounts x close price); null for COMPOSITION items',
  usd_price Float64 COMMENT 'Asset USD price (performance-history assets price)',
  apy7d Float64 COMMENT 'Asset 7-day APY, percent (0 when missing, as performance-history shows it)',
  apy30d Float64 COMMENT 'Asset 30-day APY, percent (0 when missing)',
  composition_pct Float64 COMMENT 'compositionPct: weight of the asset, percent (0 when missing)',
  weight_renormalised_pct Nullable(Float64) COMMENT 'Weight renormalised to 100 over the items having a weight that day (the compositionApy weight), percent'
) AS
WITH items AS (
  SELECT vault, item_slug AS slug, item_position AS position FROM (
    SELECT slug AS vault, JSONExtractString(item, 'slug') AS item_slug, toUInt32(pos) AS item_position
    FROM {{db}}.vault_registry
    ARRAY JOIN JSONExtractArrayRaw(info, 'targetComposition') AS item, arrayEnumerate(JSONExtractArrayRaw(info, 'targetComposition')) AS pos
  )
),
yields AS (
  SELECT vault, y_slug AS slug, toUInt8(JSONExtractUInt(y, 'decimals')) AS asset_decimals,
    JSONExtractArrayRaw(y, 'holdings') AS holdings,
    if(indexOf(item_slugs, y_slug) > 0, toUInt32(indexOf(item_slugs, y_slug)), toUInt32(length(item_slugs) + k)) AS position
  FROM (
    SELECT slug AS vault, y, JSONExtractString(y, 'slug') AS y_slug, toUInt32(k) AS k,
      arrayMap(i -> JSONExtractString(i, 'slug'), JSONExtractArrayRaw(info, 'targetComposition')) AS item_slugs
    FROM {{db}}.vault_registry
    ARRAY JOIN JSONExtractArrayRaw(info, 'yieldAssets') AS y, arrayEnumerate(JSONExtractArrayRaw(info, 'yieldAssets')) AS k
  )
),
days AS (
  SELECT vault, day, least(toUInt32(toDateTime(day, 'UTC')) + 86399, toUInt32(now('UTC'))) AS t,
    toUInt32(toDateTime(day - 7, 'UTC')) + 86399 AS t7, toUInt32(toDateTime(day - 30, 'UTC')) + 86399 AS t30
  FROM (
    SELECT toString(vault) AS vault, arrayJoin(arrayMap(i -> toDate(min(ts)) + i, range(toUInt32(today() - toDate(min(ts))) + 1))) AS day
    FROM {{db}}.snapshots_raw FINAL WHERE kind = 'COMPOSITION' OR (kind = 'ASSET_PRICE' AND chain_id = 0) GROUP BY vault
  )
),
prices AS (
  SELECT toString(vault) AS vault, lower(token) AS token, toUInt32(ts) AS t, usd_price, toUInt8(1) AS found
  FROM {{db}}.snapshots_raw FINAL WHERE kind = 'ASSET_PRICE' AND chain_id = 0
),
composition_rows AS (
  SELECT g.vault AS vault, g.day AS day, g.position AS position, g.slug AS slug, toDateTime(c.t, 'UTC') AS snapshot_at,
    multiIf(isNotNull(c.usd_price), toInt256(reinterpretAsInt128(assumeNotNull(c.usd_price))),
      p.found = 1 AND isNotNull(p.usd_price), toInt256(reinterpretAsInt128(assumeNotNull(p.usd_price))), toInt256(0)) AS usd_price_e18,
    if(isNull(c.apy7d), NULL, toInt256(reinterpretAsInt128(assumeNotNull(c.apy7d)))) AS apy7d_e18,
    if(isNull(c.apy30d), NULL, toInt256(reinterpretAsInt128(assumeNotNull(c.apy30d)))) AS apy30d_e18,
    if(isNull(c.weight), NULL, toInt256(reinterpretAsInt128(assumeNotNull(c.weight)))) AS weight_e18,
    CAST(NULL, 'Nullable(Int256)') AS held_usd_e18
  FROM (
    SELECT d.vault AS vault, d.day AS day, d.t AS t, i.slug AS slug, i.position AS position
    FROM days AS d INNER JOIN items AS i ON i.vault = d.vault
    LEFT ANTI JOIN yields AS y ON y.vault = i.vault AND y.slug = i.slug
  ) AS g
  ASOF INNER JOIN (
    SELECT toString(vault) AS vault, token, toUInt32(ts) AS t, usd_price, apy7d, apy30d, weight
    FROM {{db}}.snapshots_raw FINAL WHERE kind = 'COMPOSITION'
  ) AS c ON c.vault = g.vault AND c.token = g.slug AND g.t >= c.t
  ASOF LEFT JOIN prices AS p ON p.vault = g.vault AND p.token = g.slug AND g.t >= p.t
),
yield_grid AS (
  SELECT d.vault AS vault, d.day AS day, d.t AS t, d.t7 AS t7, d.t30 AS t30, y.slug AS slug, y.position AS position,
    y.asset_decimals AS asset_decimals, y.holdings AS holdings
  FROM days AS d INNER JOIN yields AS y ON y.vault = d.vault
),
yield_held AS (
  SELECT h.vault AS vault, h.day AS day, h.slug AS slug, any(h.t) AS t, any(h.t7) AS t7, any(h.t30) AS t30,
    any(h.position) AS position, any(h.asset_decimals) AS asset_decimals,
    sum(toInt256(if(b.found = 1, b.amount, toUInt256(0)))) AS amount_raw
  FROM (
    SELECT vault, day, t, t7, t30, slug, position, asset_decimals, toUInt32(JSONExtractUInt(hold, 'chainId')) AS chain_id,
      lower(JSONExtractString(hold, 'contractAddress')) AS contract_address
    FROM yield_grid ARRAY JOIN holdings AS hold
  ) AS h
  ASOF LEFT JOIN (
    SELECT toString(vault) AS vault, chain_id, lower(token) AS token, toUInt32(ts) AS t, amount, toUInt8(1) AS found
    FROM {{db}}.snapshots_raw FINAL WHERE kind = 'ASSET_BALANCE'
  ) AS b ON b.vault = h.vault AND b.chain_id = h.chain_id AND b.token = h.contract_address AND h.t >= b.t
  GROUP BY h.vault, h.day, h.slug
),
yield_values AS (
  SELECT g.vault AS vault, g.day AS day, g.slug AS slug, g.position AS position, toDateTime(p.t, 'UTC') AS snapshot_at,
    toInt256(reinterpretAsInt128(assumeNotNull(p.usd_price))) AS price_e18,
    if(p7.found = 1 AND isNotNull(p7.usd_price), toInt256(reinterpretAsInt128(assumeNotNull(p7.usd_price))), toInt256(0)) AS price_7d_ago_e18,
    if(p30.found = 1 AND isNotNull(p30.usd_price), toInt256(reinterpretAsInt128(assumeNotNull(p30.usd_price))), toInt256(0)) AS price_30d_ago_e18,
    intDiv(price_e18 * g.amount_raw, toInt256(concat('1', repeat('0', g.asset_decimals)))) AS usd_e18
  FROM yield_held AS g
  ASOF INNER JOIN (SELECT * FROM prices WHERE isNotNull(usd_price)) AS p ON p.vault = g.vault AND p.token = lower(g.slug) AND g.t >= p.t
  ASOF LEFT JOIN prices AS p7 ON p7.vault = g.vault AND p7.token = lower(g.slug) AND g.t7 >= p7.t
  ASOF LEFT JOIN prices AS p30 ON p30.vault = g.vault AND p30.token = lower(g.slug) AND g.t30 >= p30.t
),
yield_rows AS (
  SELECT v.vault AS vault, v.day AS day, v.position AS position, v.slug AS slug, v.snapshot_at AS snapshot_at,
    v.price_e18 AS usd_price_e18,
    if(v.price_7d_ago_e18 = 0, NULL,
      intDiv((v.price_e18 - v.price_7d_ago_e18) * toInt256('36500000000000000000000'), v.price_7d_ago_e18 * 7)) AS apy7d_e18,
    if(v.price_30d_ago_e18 = 0, NULL,
      intDiv((v.price_e18 - v.price_30d_ago_e18) * toInt256('36500000000000000000000'), v.price_30d_ago_e18 * 30)) AS apy30d_e18,
    if(v.total_e18 + ifNull(l.liquid_funds_usd_e18, toInt256(0)) = 0, toInt256(0),
      intDiv(v.usd_e18 * toInt256('100000000000000000000'), v.total_e18 + ifNull(l.liquid_funds_usd_e18, toInt256(0)))) AS weight_e18,
    v.usd_e18 AS held_usd_e18
  FROM (
    SELECT vault, day, position, slug, snapshot_at, price_e18, price_7d_ago_e18, price_30d_ago_e18, usd_e18,
      sum(usd_e18) OVER (PARTITION BY vault, day) AS total_e18
    FROM yield_values
  ) AS v
  LEFT JOIN {{db}}.liquid_funds_daily AS l ON l.vault = v.vault AND l.day = v.day
),
rows AS (
  SELECT vault, day, position, slug, snapshot_at, usd_price_e18, apy7d_e18, apy30d_e18, weight_e18, held_usd_e18 FROM composition_rows
  UNION ALL
  SELECT vault, day, position, slug, snapshot_at, usd_price_e18, apy7d_e18, apy30d_e18,
    CAST(weight_e18, 'Nullable(Int256)') AS weight_e18, CAST(held_usd_e18, 'Nullable(Int256)') AS held_usd_e18 FROM yield_rows
)
SELECT vault, day, position, slug, snapshot_at, usd_price_e18, apy7d_e18, apy30d_e18, weight_e18, held_usd_e18,
  toFloat64(toString(reinterpret(usd_price_e18, 'Decimal256(18)'))) AS usd_price,
  toFloat64(toString(reinterpret(ifNull(apy7d_e18, toInt256(0)), 'Decimal256(18)'))) AS apy7d,
  toFloat64(toString(reinterpret(ifNull(apy30d_e18, toInt256(0)), 'Decimal256(18)'))) AS apy30d,
  toFloat64(toString(reinterpret(ifNull(weight_e18, toInt256(0)), 'Decimal256(18)'))) AS composition_pct,
  if(isNull(weight_e18), NULL, if(sum(composition_pct) OVER (PARTITION BY vault, day) = 0, 0,
    composition_pct / (sum(composition_pct) OVER (PARTITION BY vault, day)) * 100)) AS weight_renormalised_pct
FROM rows
COMMENT 'Per vault, UTC day and yield asset: price, APYs and weight. A configured yield asset (info.yieldAssets) from its chain-0 ASSET_PRICE closes and the vault ASSET_BALANCE of its holdings on every chain; any other targetComposition item from its COMPOSITION snapshot. Liquid assets and off-chain value are not items';
