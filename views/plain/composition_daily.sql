-- compositionPct per item. A targetComposition item that is a configured yield asset
-- (registry info.yieldAssets, same slug) takes its close price per UTC day from the chain-0
-- ASSET_PRICE snapshots of its slug, its apy7d and apy30d from that price 7 and 30 days earlier
-- ((P(d)/P(d-N) - 1) * 365/N * 100, as navApy), and its weight from the USD value of the
-- vault's ASSET_BALANCE snapshots of its holdings on every chain at the day's close (each
-- balance at the chain-0 close price). compositionPct is that value over everything the
-- vault's snapshots show it holds (yield assets plus liquid_funds_daily). Items that are not
-- configured yield assets take the COMPOSITION snapshots.
-- ClickHouse inlines every reference to a CTE or a view, so a CTE read twice is computed
-- twice: this form reads its yield-asset grid once (the prices are ASOF-joined to the
-- aggregated holdings) and takes each day's total held value with a window sum.
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
    SELECT CAST(vault, 'String') AS vault, arrayJoin(arrayMap(i -> toDate(min(ts)) + i, range(toUInt32(today() - toDate(min(ts))) + 1))) AS day
    FROM {{db}}.snapshots_raw FINAL WHERE kind = 'COMPOSITION' OR (kind = 'ASSET_PRICE' AND chain_id = 0) GROUP BY vault
  )
),
prices AS (
  SELECT CAST(vault, 'String') AS vault, lower(token) AS token, toUInt32(ts) AS t, usd_price, toUInt8(1) AS found
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
    SELECT CAST(vault, 'String') AS vault, token, toUInt32(ts) AS t, usd_price, apy7d, apy30d, weight
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
    SELECT CAST(vault, 'String') AS vault, chain_id, lower(token) AS token, toUInt32(ts) AS t, amount, toUInt8(1) AS found
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
