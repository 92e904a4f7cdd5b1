-- Cheaper forms of five views of 008, same columns and values (views-parity.test.ts): the
-- 7- and 30-day look-backs of nav_apy_daily and vault_tvl_daily are window frames
-- (RANGE n PRECEDING AND n PRECEDING) instead of self-joins, and the day grids of the
-- liquid-funds and composition views start at the vault's first snapshot instead of
-- re-reading every rate through vault_price_daily. composition_apy_daily lists the days
-- with at least one yield asset (the API reads a missing day as every member null).

CREATE OR REPLACE VIEW {{db}}.nav_apy_daily {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain whose closes give the price P',
  day Date COMMENT 'UTC day d',
  price_e18 Int256 COMMENT 'P(d): close share price, scaled by 1e18',
  price_7d_ago_e18 Int256 COMMENT 'P(d-7) scaled by 1e18; 0 when there is no close that early',
  price_30d_ago_e18 Int256 COMMENT 'P(d-30) scaled by 1e18; 0 when there is no close that early',
  rolling7d Nullable(Float64) COMMENT 'navApy rolling 7 days, percent: (P(d)/P(d-7) - 1) * 365/7 * 100; null without P(d-7)',
  rolling30d Nullable(Float64) COMMENT 'navApy rolling 30 days, percent: (P(d)/P(d-30) - 1) * 365/30 * 100; null without P(d-30)',
  sec30d Nullable(Float64) COMMENT 'navApy SEC 30-day yield, percent: 2 * ((P(d)/P(d-30))^6 - 1) * 100; null without P(d-30)',
  settled UInt8 COMMENT '1 when the day is settled for the vault (vault_settlement)'
) AS
SELECT p.vault AS vault, p.chain_id AS chain_id, p.day AS day, p.price_e18 AS price_e18,
  p.price_e18_7 AS price_7d_ago_e18, p.price_e18_30 AS price_30d_ago_e18,
  if(price_7d_ago_e18 = 0, NULL,
    (toFloat64(toString(reinterpret(intDiv(price_e18 * toInt256('1000000000000000000'), price_7d_ago_e18), 'Decimal256(18)'))) - 1)
      * (365 / 7) * 100) AS rolling7d,
  if(price_30d_ago_e18 = 0, NULL,
    (toFloat64(toString(reinterpret(intDiv(price_e18 * toInt256('1000000000000000000'), price_30d_ago_e18), 'Decimal256(18)'))) - 1)
      * (365 / 30) * 100) AS rolling30d,
  if(price_30d_ago_e18 = 0, NULL,
    2 * (pow(toFloat64(toString(reinterpret(intDiv(price_e18 * toInt256('1000000000000000000'), price_30d_ago_e18), 'Decimal256(18)'))), 6) - 1)
      * 100) AS sec30d,
  toUInt8(p.day <= s.last_settled_day) AS settled
FROM (
  SELECT vault, chain_id, day, price_e18,
    sum(price_e18) OVER (PARTITION BY vault, chain_id ORDER BY toUInt32(day) RANGE BETWEEN 7 PRECEDING AND 7 PRECEDING) AS price_e18_7,
    sum(price_e18) OVER (PARTITION BY vault, chain_id ORDER BY toUInt32(day) RANGE BETWEEN 30 PRECEDING AND 30 PRECEDING) AS price_e18_30
  FROM {{db}}.price_close_daily
) AS p
LEFT JOIN {{db}}.vault_settlement AS s ON s.vault = p.vault
COMMENT 'navApy per (vault, chain, UTC day) from the daily closes (DESIGN section 8); the API shows it for settled days only';

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

CREATE OR REPLACE VIEW {{db}}.liquid_funds_asset_daily {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  day Date COMMENT 'UTC day, from the vault first ASSET_BALANCE snapshot to today',
  as_of DateTime('UTC') COMMENT 'Time the snapshots are read as of: the end of the day, now for today',
  chain_id UInt32 COMMENT 'Chain of the configured liquid asset',
  contract_address String COMMENT 'Liquid asset contract (lower-case)',
  asset_decimals UInt8 COMMENT 'Decimals of the liquid asset',
  amount_raw UInt256 COMMENT 'Balance held by the vault from the latest ASSET_BALANCE snapshot as of as_of, raw units (0 without one)',
  price_source LowCardinality(String) COMMENT 'snapshot (latest ASSET_PRICE on the asset chain or chain 0) or config (the configured price)',
  usd_price_e18 Int256 COMMENT 'USD price of the asset scaled by 1e18',
  usd_e18 Int256 COMMENT 'USD value held, scaled by 1e18: usd_price_e18 * amount_raw / 10^asset_decimals',
  usd Float64 COMMENT 'USD value held'
) AS
WITH assets AS (
  SELECT slug AS vault, toUInt32(JSONExtractUInt(a, 'chainId')) AS chain_id, lower(JSONExtractString(a, 'contractAddress')) AS contract_address,
    toUInt8(JSONExtractUInt(a, 'decimals')) AS asset_decimals,
    reinterpret(toDecimal256(JSONExtractRaw(a, 'price'), 18), 'Int256') AS config_price_e18
  FROM {{db}}.vault_registry ARRAY JOIN JSONExtractArrayRaw(info, 'liquidAssets') AS a
),
grid AS (
  SELECT a.vault AS vault, g.day AS day, least(toUInt32(toDateTime(g.day, 'UTC')) + 86399, toUInt32(now('UTC'))) AS t,
    a.chain_id AS chain_id, a.contract_address AS contract_address, a.asset_decimals AS asset_decimals,
    a.config_price_e18 AS config_price_e18
  FROM (
    SELECT toString(vault) AS vault, arrayJoin(arrayMap(i -> toDate(min(ts)) + i, range(toUInt32(today() - toDate(min(ts))) + 1))) AS day
    FROM {{db}}.snapshots_raw FINAL WHERE kind = 'ASSET_BALANCE' GROUP BY vault
  ) AS g INNER JOIN assets AS a ON a.vault = g.vault
),
snaps AS (
  SELECT toString(vault) AS vault, kind, chain_id, lower(token) AS token, toUInt32(ts) AS t, amount, usd_price, toUInt8(1) AS found
  FROM {{db}}.snapshots_raw FINAL WHERE kind IN ('ASSET_BALANCE', 'ASSET_PRICE')
)
SELECT g.vault AS vault, g.day AS day, toDateTime(g.t, 'UTC') AS as_of, g.chain_id AS chain_id, g.contract_address AS contract_address,
  g.asset_decimals AS asset_decimals, if(b.found = 1, b.amount, toUInt256(0)) AS amount_raw,
  multiIf(pa.found = 1 AND pb.found = 1, if(pa.t >= pb.t, pa.usd_price, pb.usd_price), pa.found = 1, pa.usd_price,
    pb.found = 1, pb.usd_price, NULL) AS snap_usd,
  toLowCardinality(if(isNull(snap_usd), 'config', 'snapshot')) AS price_source,
  if(isNull(snap_usd), g.config_price_e18, toInt256(reinterpretAsInt128(assumeNotNull(snap_usd)))) AS usd_price_e18,
  intDiv(usd_price_e18 * toInt256(amount_raw), toInt256(concat('1', repeat('0', g.asset_decimals)))) AS usd_e18,
  toFloat64(toString(reinterpret(usd_e18, 'Decimal256(18)'))) AS usd
FROM grid AS g
ASOF LEFT JOIN (SELECT * FROM snaps WHERE kind = 'ASSET_BALANCE') AS b
  ON b.vault = g.vault AND b.chain_id = g.chain_id AND b.token = g.contract_address AND g.t >= b.t
ASOF LEFT JOIN (SELECT * FROM snaps WHERE kind = 'ASSET_PRICE') AS pa
  ON pa.vault = g.vault AND pa.chain_id = g.chain_id AND pa.token = g.contract_address AND g.t >= pa.t
ASOF LEFT JOIN (SELECT * FROM snaps WHERE kind = 'ASSET_PRICE' AND chain_id = 0) AS pb
  ON pb.vault = g.vault AND pb.token = g.contract_address AND g.t >= pb.t AND g.chain_id != 0
COMMENT 'Liquid funds per vault, UTC day and configured liquid asset (DESIGN section 8 liquidFunds, from the snapshots)';

CREATE OR REPLACE VIEW {{db}}.composition_daily {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  day Date COMMENT 'UTC day, from the vault first COMPOSITION snapshot to today',
  position UInt32 COMMENT 'Position of the item in the vault targetComposition (1-based)',
  slug String COMMENT 'targetComposition item (yield asset) slug',
  snapshot_at DateTime('UTC') COMMENT 'Time of the latest COMPOSITION snapshot of the item at or before the end of the day (now for today)',
  usd_price_e18 Int256 COMMENT 'Asset USD price scaled by 1e18: the snapshot price, else the latest chain-0 ASSET_PRICE of the slug, else 0',
  apy7d_e18 Nullable(Int256) COMMENT 'Asset 7-day APY, percent scaled by 1e18; null when the snapshot has none',
  apy30d_e18 Nullable(Int256) COMMENT 'Asset 30-day APY, percent scaled by 1e18; null when the snapshot has none',
  weight_e18 Nullable(Int256) COMMENT 'compositionPct (weight), percent scaled by 1e18; null when the snapshot has none',
  usd_price Float64 COMMENT 'Asset USD price (performance-history assets price)',
  apy7d Float64 COMMENT 'Asset 7-day APY, percent (0 when missing, as performance-history shows it)',
  apy30d Float64 COMMENT 'Asset 30-day APY, percent (0 when missing)',
  composition_pct Float64 COMMENT 'compositionPct: weight of the asset, percent (0 when missing)',
  weight_renormalised_pct Nullable(Float64) COMMENT 'Weight renormalised to 100 over the items having a weight that day, percent'
) AS
WITH items AS (
  SELECT vault, item_slug AS slug, item_position AS position FROM (
    SELECT slug AS vault, JSONExtractString(item, 'slug') AS item_slug, toUInt32(pos) AS item_position
    FROM {{db}}.vault_registry
    ARRAY JOIN JSONExtractArrayRaw(info, 'targetComposition') AS item, arrayEnumerate(JSONExtractArrayRaw(info, 'targetComposition')) AS pos
  )
),
grid AS (
  SELECT i.vault AS vault, g.day AS day, least(toUInt32(toDateTime(g.day, 'UTC')) + 86399, toUInt32(now('UTC'))) AS t,
    i.slug AS slug, i.position AS position
  FROM (
    SELECT toString(vault) AS vault, arrayJoin(arrayMap(i -> toDate(min(ts)) + i, range(toUInt32(today() - toDate(min(ts))) + 1))) AS day
    FROM {{db}}.snapshots_raw FINAL WHERE kind = 'COMPOSITION' GROUP BY vault
  ) AS g INNER JOIN items AS i ON i.vault = g.vault
),
rows AS (
  SELECT g.vault AS vault, g.day AS day, g.position AS position, g.slug AS slug, toDateTime(c.t, 'UTC') AS snapshot_at,
    multiIf(isNotNull(c.usd_price), toInt256(reinterpretAsInt128(assumeNotNull(c.usd_price))),
      p.found = 1 AND isNotNull(p.usd_price), toInt256(reinterpretAsInt128(assumeNotNull(p.usd_price))), toInt256(0)) AS usd_price_e18,
    if(isNull(c.apy7d), NULL, toInt256(reinterpretAsInt128(assumeNotNull(c.apy7d)))) AS apy7d_e18,
    if(isNull(c.apy30d), NULL, toInt256(reinterpretAsInt128(assumeNotNull(c.apy30d)))) AS apy30d_e18,
    if(isNull(c.weight), NULL, toInt256(reinterpretAsInt128(assumeNotNull(c.weight)))) AS weight_e18
  FROM grid AS g
  ASOF INNER JOIN (
    SELECT toString(vault) AS vault, token, toUInt32(ts) AS t, usd_price, apy7d, apy30d, weight
    FROM {{db}}.snapshots_raw FINAL WHERE kind = 'COMPOSITION'
  ) AS c ON c.vault = g.vault AND c.token = g.slug AND g.t >= c.t
  ASOF LEFT JOIN (
    SELECT toString(vault) AS vault, lower(token) AS token, toUInt32(ts) AS t, usd_price, toUInt8(1) AS found
    FROM {{db}}.snapshots_raw FINAL WHERE kind = 'ASSET_PRICE' AND chain_id = 0
  ) AS p ON p.vault = g.vault AND p.token = g.slug AND g.t >= p.t
)
SELECT vault, day, position, slug, snapshot_at, usd_price_e18, apy7d_e18, apy30d_e18, weight_e18,
  toFloat64(toString(reinterpret(usd_price_e18, 'Decimal256(18)'))) AS usd_price,
  toFloat64(toString(reinterpret(ifNull(apy7d_e18, toInt256(0)), 'Decimal256(18)'))) AS apy7d,
  toFloat64(toString(reinterpret(ifNull(apy30d_e18, toInt256(0)), 'Decimal256(18)'))) AS apy30d,
  toFloat64(toString(reinterpret(ifNull(weight_e18, toInt256(0)), 'Decimal256(18)'))) AS composition_pct,
  if(isNull(weight_e18), NULL, composition_pct / (sum(composition_pct) OVER (PARTITION BY vault, day)) * 100) AS weight_renormalised_pct
FROM rows
COMMENT 'Per vault, UTC day and yield asset (targetComposition item with a COMPOSITION snapshot by the end of the day): price, APYs and weight; liquid assets and off-chain value are not items';

CREATE OR REPLACE VIEW {{db}}.composition_apy_daily {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  day Date COMMENT 'UTC day with at least one yield asset snapshot by its end',
  assets UInt64 COMMENT 'Yield assets with a COMPOSITION snapshot by the end of the day',
  rolling7d Nullable(Float64) COMMENT 'compositionApy rolling 7 days, percent: sum(w * apy7d) / sum(w) over the assets having both; null when none has',
  rolling30d Nullable(Float64) COMMENT 'compositionApy rolling 30 days, percent: sum(w * apy30d) / sum(w); null when none has',
  sec30d Nullable(Float64) COMMENT 'compositionApy SEC 30-day, percent: 2 * ((1 + rolling30d/100 * 30/365)^6 - 1) * 100',
  settled UInt8 COMMENT '1 when the day is settled for the vault (the API shows apy/compositionApy on settled days only)'
) AS
SELECT a.vault AS vault, a.day AS day, a.assets AS assets,
  if(a.den7 = 0, NULL, toFloat64(toString(reinterpret(intDiv(a.num7, a.den7), 'Decimal256(18)')))) AS rolling7d,
  if(a.den30 = 0, NULL, toFloat64(toString(reinterpret(intDiv(a.num30, a.den30), 'Decimal256(18)')))) AS rolling30d,
  if(a.den30 = 0, NULL, 2 * (pow(1 + ((rolling30d / 100) * 30) / 365, 6) - 1) * 100) AS sec30d,
  toUInt8(a.day <= s.last_settled_day) AS settled
FROM (
  SELECT vault, day, count() AS assets,
    sumIf(assumeNotNull(weight_e18) * assumeNotNull(apy7d_e18), isNotNull(weight_e18) AND isNotNull(apy7d_e18)) AS num7,
    sumIf(assumeNotNull(weight_e18), isNotNull(weight_e18) AND isNotNull(apy7d_e18)) AS den7,
    sumIf(assumeNotNull(weight_e18) * assumeNotNull(apy30d_e18), isNotNull(weight_e18) AND isNotNull(apy30d_e18)) AS num30,
    sumIf(assumeNotNull(weight_e18), isNotNull(weight_e18) AND isNotNull(apy30d_e18)) AS den30
  FROM {{db}}.composition_daily GROUP BY vault, day
) AS a
LEFT JOIN {{db}}.vault_settlement AS s ON s.vault = a.vault
COMMENT 'compositionApy per vault and UTC day with at least one yield asset (DESIGN section 8): weights of the yield assets only, renormalised to 100';
