-- Every metric the API serves, as views (issue 12). The formulas are DESIGN section 8's and
-- mirror api/read exactly: prices and USD values are Int256 integers scaled by 1e18 ("*_e18",
-- each product truncated where the TypeScript truncates) and the Float64 columns are those
-- integers read as decimal numbers (the same correctly rounded conversion the API uses).
-- Rates, snapshots and the registry are versioned rows read FINAL (a reorg retracts a rate),
-- which an incremental aggregate cannot undo, so these are plain views over the raw tables and
-- over the incremental tables of 002 (supply, fees, holders). "Now" is the server clock:
-- docs/queries/*.sql show the same numbers at any other clock ({now:UInt32}).
-- Helpers written inline below:
--   e18 -> Float64:  toFloat64(toString(reinterpret(x, 'Decimal256(18)')))
--   10^n as Int256:  toInt256(concat('1', repeat('0', n)))

CREATE VIEW IF NOT EXISTS {{db}}.vault_settlement {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chains Array(UInt32) COMMENT 'Chains of the vault: its EVM chain ids, plus 101 when it has a Solana mint',
  watermark DateTime('UTC') COMMENT 'Oldest chain watermark among the vault chains (1970-01-01 when one chain has none yet), UTC',
  settled_through DateTime('UTC') COMMENT 'min(now, watermark): every UTC day ending at or before this time is settled',
  last_settled_day Date COMMENT 'Latest settled UTC day (the day before settled_through), whatever the vault history'
) AS
SELECT r.slug AS vault, arrayConcat(r.chain_ids, if(r.solana_mint != '', [toUInt32(101)], [])) AS chains,
  toDateTime(arrayMin(arrayMap(c -> w.marks[c], chains)), 'UTC') AS watermark,
  least(now('UTC'), watermark) AS settled_through,
  toDate(settled_through) - 1 AS last_settled_day
FROM {{db}}.vault_registry AS r
CROSS JOIN (
  SELECT mapFromArrays(groupArray(chain_id), groupArray(toUInt32(block_time))) AS marks FROM {{db}}.chain_watermarks
) AS w
COMMENT 'Settled days per vault: a UTC day is settled once every chain of the vault is ingested past its end (apy-history lists settled days only)';

CREATE VIEW IF NOT EXISTS {{db}}.vault_chain_decimals {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain id; 101 for Solana',
  share_decimals UInt8 COMMENT 'Share token decimals on this chain: the decimalsOverride entry, else the Solana mint decimals (101), else the vault decimals'
) AS
SELECT vault, chain_id,
  multiIf(mapContains(ov, toString(chain_id)), ov[toString(chain_id)],
    chain_id = 101 AND JSONType(info, 'solana') = 'Object', toUInt8(JSONExtractUInt(info, 'solana', 'decimals')), decimals) AS share_decimals
FROM (
  SELECT c.vault AS vault, c.chain_id AS chain_id, r.decimals AS decimals, r.info AS info,
    arrayFirst(m -> mapContains(m, toString(c.chain_id)),
      JSONExtract(r.info, 'decimalsOverride', 'Array(Map(String, UInt8))')) AS ov
  FROM (
    SELECT DISTINCT vault, chain_id FROM (
      SELECT slug AS vault, arrayJoin(arrayConcat(chain_ids, if(solana_mint != '', [toUInt32(101)], []))) AS chain_id
      FROM {{db}}.vault_registry
      UNION ALL SELECT toString(vault), chain_id FROM {{db}}.supply_deltas_daily
      UNION ALL SELECT toString(vault), chain_id FROM {{db}}.redemptions_raw
    )
  ) AS c
  INNER JOIN {{db}}.vault_registry AS r ON r.slug = c.vault
)
COMMENT 'Share decimals per vault and chain (every chain of the vault and every chain with supply or redemptions)';

CREATE VIEW IF NOT EXISTS {{db}}.vault_price_current {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Price chain: 98866 when it has a rate, else the chain with the most recent rate; the vault price history is this chain''s closes',
  rate_raw UInt256 COMMENT 'Latest accountant rate on the price chain, base-asset raw units',
  rate_decimals UInt8 COMMENT 'Decimals of rate_raw',
  updated_at DateTime('UTC') COMMENT 'Block time of the latest rate, UTC',
  is_paused UInt8 COMMENT '1 when the accountant reported paused with that rate',
  price_e18 Int256 COMMENT 'Share price in base asset, scaled by 1e18 (tokenPrice)',
  price Float64 COMMENT 'Share price in the base asset, decimal-adjusted (tokenPrice)'
) AS
SELECT vault, t.1 AS chain_id, t.2 AS rate_raw, t.3 AS rate_decimals, t.4 AS updated_at, t.5 AS is_paused,
  if(rate_decimals <= 18, toInt256(rate_raw) * toInt256(concat('1', repeat('0', 18 - rate_decimals))),
    intDiv(toInt256(rate_raw), toInt256(concat('1', repeat('0', rate_decimals - 18))))) AS price_e18,
  toFloat64(toString(reinterpret(price_e18, 'Decimal256(18)'))) AS price
FROM (
  SELECT vault, argMax((chain_id, rate, rate_decimals, updated_at, is_paused), (chain_id = 98866, updated_at)) AS t
  FROM (
    SELECT toString(vault) AS vault, chain_id, argMax(rate, (block_time, block_number, log_index)) AS rate,
      argMax(rate_decimals, (block_time, block_number, log_index)) AS rate_decimals, max(block_time) AS updated_at,
      argMax(is_paused, (block_time, block_number, log_index)) AS is_paused
    FROM {{db}}.rates GROUP BY vault, chain_id
  )
  GROUP BY vault
)
COMMENT 'Current share price per vault (details tokenPrice): the latest rate on the price chain';

CREATE VIEW IF NOT EXISTS {{db}}.price_close_daily {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain id of the accountant rate',
  day Date COMMENT 'UTC day',
  close_rate UInt256 COMMENT 'Last rate at or before the end of the day (carried forward), base-asset raw units',
  rate_decimals UInt8 COMMENT 'Decimals of close_rate',
  price_e18 Int256 COMMENT 'Close share price in the base asset, scaled by 1e18',
  price Float64 COMMENT 'Close share price in the base asset, decimal-adjusted (performance-history price on the price chain)',
  rate_updated_at DateTime('UTC') COMMENT 'Block time of the last rate update on or before the day, UTC'
) AS
SELECT toString(vault) AS vault, chain_id, day, close_rate, rate_decimals,
  if(rate_decimals <= 18, toInt256(close_rate) * toInt256(concat('1', repeat('0', 18 - rate_decimals))),
    intDiv(toInt256(close_rate), toInt256(concat('1', repeat('0', rate_decimals - 18))))) AS price_e18,
  toFloat64(toString(reinterpret(price_e18, 'Decimal256(18)'))) AS price, rate_updated_at
FROM {{db}}.price_daily
COMMENT 'Daily close share price per (vault, chain, UTC day) from the vault first rate on that chain to today';

CREATE VIEW IF NOT EXISTS {{db}}.vault_price_daily {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'The vault price chain (vault_price_current.chain_id)',
  day Date COMMENT 'UTC day, from the first close on the price chain to today: the days of performance-history',
  price_e18 Int256 COMMENT 'Close share price in the base asset, scaled by 1e18',
  price Float64 COMMENT 'Close share price in the base asset, decimal-adjusted'
) AS
SELECT p.vault AS vault, p.chain_id AS chain_id, p.day AS day, p.price_e18 AS price_e18, p.price AS price
FROM {{db}}.price_close_daily AS p
INNER JOIN {{db}}.vault_price_current AS c ON c.vault = p.vault AND c.chain_id = p.chain_id
COMMENT 'The vault price history: daily closes on its price chain';

CREATE VIEW IF NOT EXISTS {{db}}.nav_apy_daily {{on_cluster}} (
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
  p7.price_e18 AS price_7d_ago_e18, p30.price_e18 AS price_30d_ago_e18,
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
FROM (SELECT vault, chain_id, day, price_e18, day - 7 AS day7, day - 30 AS day30 FROM {{db}}.price_close_daily) AS p
LEFT JOIN {{db}}.price_close_daily AS p7 ON p7.vault = p.vault AND p7.chain_id = p.chain_id AND p7.day = p.day7
LEFT JOIN {{db}}.price_close_daily AS p30 ON p30.vault = p.vault AND p30.chain_id = p.chain_id AND p30.day = p.day30
LEFT JOIN {{db}}.vault_settlement AS s ON s.vault = p.vault
COMMENT 'navApy per (vault, chain, UTC day) from the daily closes (DESIGN section 8); the API shows it for settled days only';

CREATE VIEW IF NOT EXISTS {{db}}.tvl_chain_daily {{on_cluster}} (
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
  multiIf(own.found = 1, own.price_e18, pc.found = 1, pc.price_e18, toInt256(0)) AS price_e18,
  toLowCardinality(multiIf(own.found = 1, 'chain', pc.found = 1, 'price_chain', 'none')) AS price_source,
  toInt256(reinterpretAsInt128(r.base_asset_usd_price)) AS base_asset_usd_e18,
  intDiv(intDiv(price_e18 * base_asset_usd_e18, toInt256('1000000000000000000')) * supply_raw,
    toInt256(concat('1', repeat('0', share_decimals)))) AS tvl_usd_e18,
  toFloat64(toString(reinterpret(tvl_usd_e18, 'Decimal256(18)'))) AS tvl_usd
FROM (SELECT toString(vault) AS vault, chain_id, day, toInt256(supply_raw) AS supply_raw FROM {{db}}.supply_daily) AS s
INNER JOIN {{db}}.vault_registry AS r ON r.slug = s.vault
LEFT JOIN {{db}}.vault_chain_decimals AS d ON d.vault = s.vault AND d.chain_id = s.chain_id
LEFT JOIN (SELECT vault, chain_id, day, price_e18, toUInt8(1) AS found FROM {{db}}.price_close_daily) AS own
  ON own.vault = s.vault AND own.chain_id = s.chain_id AND own.day = s.day
LEFT JOIN (SELECT vault, day, price_e18, toUInt8(1) AS found FROM {{db}}.vault_price_daily) AS pc
  ON pc.vault = s.vault AND pc.day = s.day
COMMENT 'TVL per (vault, chain, UTC day) at that chain''s own close price (DESIGN section 8 tvl); sum the chains with vault_tvl_daily';

CREATE VIEW IF NOT EXISTS {{db}}.vault_tvl_daily {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  day Date COMMENT 'UTC day (days from the first supply change on any chain to today)',
  tvl_usd_e18 Int256 COMMENT 'TVL in USD scaled by 1e18: sum over chains of tvl_chain_daily.tvl_usd_e18',
  tvl_usd Float64 COMMENT 'TVL at the end of the day, USD (performance-history tvl; today: details tvl)',
  tvl_30d_ago_usd_e18 Int256 COMMENT 'TVL 30 days earlier, USD scaled by 1e18 (0 before the first supply)',
  tvl_30d_change_pct Float64 COMMENT 'tvl30DayChange, percent: (tvl / tvl 30 days ago - 1) * 100, 0 when there was no TVL 30 days ago'
) AS
SELECT t.vault AS vault, t.day AS day, t.tvl_usd_e18 AS tvl_usd_e18,
  toFloat64(toString(reinterpret(t.tvl_usd_e18, 'Decimal256(18)'))) AS tvl_usd,
  p.tvl_usd_e18 AS tvl_30d_ago_usd_e18,
  if(tvl_30d_ago_usd_e18 = 0, 0,
    (toFloat64(toString(reinterpret(intDiv(t.tvl_usd_e18 * toInt256('1000000000000000000'), tvl_30d_ago_usd_e18), 'Decimal256(18)'))) - 1)
      * 100) AS tvl_30d_change_pct
FROM (SELECT vault, day, sum(tvl_usd_e18) AS tvl_usd_e18, day - 30 AS day30 FROM {{db}}.tvl_chain_daily GROUP BY vault, day) AS t
LEFT JOIN (SELECT vault, day, sum(tvl_usd_e18) AS tvl_usd_e18 FROM {{db}}.tvl_chain_daily GROUP BY vault, day) AS p
  ON p.vault = t.vault AND p.day = t.day30
COMMENT 'Vault TVL per UTC day, every chain at its own price, and its 30-day change';

CREATE VIEW IF NOT EXISTS {{db}}.liquid_funds_asset_daily {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  day Date COMMENT 'UTC day (the vault price-history days)',
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
  FROM (SELECT vault, day FROM {{db}}.vault_price_daily) AS g INNER JOIN assets AS a ON a.vault = g.vault
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

CREATE VIEW IF NOT EXISTS {{db}}.liquid_funds_daily {{on_cluster}} (
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

CREATE VIEW IF NOT EXISTS {{db}}.composition_daily {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  day Date COMMENT 'UTC day (the vault price-history days)',
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
  FROM (SELECT vault, day FROM {{db}}.vault_price_daily) AS g INNER JOIN items AS i ON i.vault = g.vault
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

CREATE VIEW IF NOT EXISTS {{db}}.composition_apy_daily {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  day Date COMMENT 'UTC day (the vault price-history days)',
  assets UInt64 COMMENT 'Yield assets with a COMPOSITION snapshot by the end of the day',
  rolling7d Nullable(Float64) COMMENT 'compositionApy rolling 7 days, percent: sum(w * apy7d) / sum(w) over the assets having both; null when none has',
  rolling30d Nullable(Float64) COMMENT 'compositionApy rolling 30 days, percent: sum(w * apy30d) / sum(w); null when none has',
  sec30d Nullable(Float64) COMMENT 'compositionApy SEC 30-day, percent: 2 * ((1 + rolling30d/100 * 30/365)^6 - 1) * 100',
  settled UInt8 COMMENT '1 when the day is settled for the vault (the API shows apy/compositionApy on settled days only)'
) AS
SELECT g.vault AS vault, g.day AS day, a.assets AS assets,
  if(a.den7 = 0, NULL, toFloat64(toString(reinterpret(intDiv(a.num7, a.den7), 'Decimal256(18)')))) AS rolling7d,
  if(a.den30 = 0, NULL, toFloat64(toString(reinterpret(intDiv(a.num30, a.den30), 'Decimal256(18)')))) AS rolling30d,
  if(a.den30 = 0, NULL, 2 * (pow(1 + ((rolling30d / 100) * 30) / 365, 6) - 1) * 100) AS sec30d,
  toUInt8(g.day <= s.last_settled_day) AS settled
FROM (SELECT vault, day FROM {{db}}.vault_price_daily) AS g
LEFT JOIN (
  SELECT vault, day, count() AS assets,
    sumIf(assumeNotNull(weight_e18) * assumeNotNull(apy7d_e18), isNotNull(weight_e18) AND isNotNull(apy7d_e18)) AS num7,
    sumIf(assumeNotNull(weight_e18), isNotNull(weight_e18) AND isNotNull(apy7d_e18)) AS den7,
    sumIf(assumeNotNull(weight_e18) * assumeNotNull(apy30d_e18), isNotNull(weight_e18) AND isNotNull(apy30d_e18)) AS num30,
    sumIf(assumeNotNull(weight_e18), isNotNull(weight_e18) AND isNotNull(apy30d_e18)) AS den30
  FROM {{db}}.composition_daily GROUP BY vault, day
) AS a ON a.vault = g.vault AND a.day = g.day
LEFT JOIN {{db}}.vault_settlement AS s ON s.vault = g.vault
COMMENT 'compositionApy per vault and UTC day (DESIGN section 8): weights of the yield assets only, renormalised to 100';

CREATE VIEW IF NOT EXISTS {{db}}.volume_daily {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  day Date COMMENT 'UTC day',
  deposits UInt64 COMMENT 'Number of DEPOSIT events',
  withdrawals UInt64 COMMENT 'Number of WITHDRAW and INSTANT_REDEEM events',
  deposits_usd_e18 Int256 COMMENT 'Assets deposited, USD scaled by 1e18 (assets at the base asset USD price)',
  withdrawals_usd_e18 Int256 COMMENT 'Assets withdrawn (WITHDRAW and INSTANT_REDEEM), USD scaled by 1e18',
  volume_usd_e18 Int256 COMMENT 'Volume: deposits plus withdrawals, USD scaled by 1e18',
  deposits_usd Float64 COMMENT 'Assets deposited, USD',
  withdrawals_usd Float64 COMMENT 'Assets withdrawn, USD',
  volume_usd Float64 COMMENT 'Volume (DEPOSIT, WITHDRAW, INSTANT_REDEEM assets), USD'
) AS
SELECT vault, day, sum(n_dep) AS deposits, sum(n_wd) AS withdrawals,
  sum(dep_e18) AS deposits_usd_e18, sum(wd_e18) AS withdrawals_usd_e18, deposits_usd_e18 + withdrawals_usd_e18 AS volume_usd_e18,
  toFloat64(toString(reinterpret(deposits_usd_e18, 'Decimal256(18)'))) AS deposits_usd,
  toFloat64(toString(reinterpret(withdrawals_usd_e18, 'Decimal256(18)'))) AS withdrawals_usd,
  toFloat64(toString(reinterpret(volume_usd_e18, 'Decimal256(18)'))) AS volume_usd
FROM (
  SELECT toString(t.vault) AS vault, toDate(t.block_time) AS day, t.assets_decimals AS assets_decimals,
    countIf(t.kind = 'DEPOSIT') AS n_dep, countIf(t.kind != 'DEPOSIT') AS n_wd,
    intDiv(toInt256(reinterpretAsInt128(any(r.base_asset_usd_price))) * toInt256(sumIf(t.assets, t.kind = 'DEPOSIT')),
      toInt256(concat('1', repeat('0', t.assets_decimals)))) AS dep_e18,
    intDiv(toInt256(reinterpretAsInt128(any(r.base_asset_usd_price))) * toInt256(sumIf(t.assets, t.kind != 'DEPOSIT')),
      toInt256(concat('1', repeat('0', t.assets_decimals)))) AS wd_e18
  FROM {{db}}.transactions AS t INNER JOIN {{db}}.vault_registry AS r ON r.slug = t.vault
  WHERE t.kind IN ('DEPOSIT', 'WITHDRAW', 'INSTANT_REDEEM')
  GROUP BY vault, day, assets_decimals
)
GROUP BY vault, day
COMMENT 'Deposits and withdrawals per vault and UTC day in USD (assets valued at the configured base asset USD price)';

CREATE VIEW IF NOT EXISTS {{db}}.vault_volume_24h {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  volume_24h_usd_e18 Int256 COMMENT 'USD scaled by 1e18 of the DEPOSIT, WITHDRAW and INSTANT_REDEEM assets in (now - 24 h, now]',
  volume_24h_usd Float64 COMMENT 'volume24h, USD'
) AS
SELECT vault, sum(usd_e18) AS volume_24h_usd_e18, toFloat64(toString(reinterpret(volume_24h_usd_e18, 'Decimal256(18)'))) AS volume_24h_usd
FROM (
  SELECT toString(t.vault) AS vault,
    intDiv(toInt256(reinterpretAsInt128(any(r.base_asset_usd_price))) * toInt256(sum(t.assets)),
      toInt256(concat('1', repeat('0', t.assets_decimals)))) AS usd_e18
  FROM {{db}}.transactions AS t INNER JOIN {{db}}.vault_registry AS r ON r.slug = t.vault
  WHERE t.kind IN ('DEPOSIT', 'WITHDRAW', 'INSTANT_REDEEM')
    AND t.block_time > now('UTC') - INTERVAL 1 DAY AND t.block_time <= now('UTC')
  GROUP BY vault, t.assets_decimals
)
GROUP BY vault
COMMENT 'volume24h per vault (vaults, details): assets moved in the last 24 hours, USD';

CREATE VIEW IF NOT EXISTS {{db}}.pending_redemptions {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain of the redemption queue',
  queue String COMMENT 'Queue contract address',
  request_id String COMMENT 'Request id within the queue',
  deadline DateTime('UTC') COMMENT 'Deadline of the request, UTC: it is pending while deadline > now',
  is_open UInt8 COMMENT '1 when the request is pending now (deadline after now): count it in pendingRedemptions',
  shares_raw UInt256 COMMENT 'Shares requested (latest update), raw units',
  share_decimals UInt8 COMMENT 'Share decimals on the chain',
  shares Float64 COMMENT 'Shares requested, decimal-adjusted',
  share_usd_e18 Int256 COMMENT 'Current share price in USD scaled by 1e18: vault_price_current.price_e18 * base asset USD / 1e18',
  value_usd_e18 Int256 COMMENT 'USD value of the shares scaled by 1e18: share_usd_e18 * shares_raw / 10^share_decimals (the API truncates once per chain: sum shares_raw first)',
  value_usd Float64 COMMENT 'USD value of the shares at the current share price'
) AS
SELECT q.vault AS vault, q.chain_id AS chain_id, q.queue AS queue, q.request_id AS request_id, q.deadline AS deadline,
  toUInt8(q.deadline > now('UTC')) AS is_open, q.amount AS shares_raw, d.share_decimals AS share_decimals,
  toFloat64(toString(reinterpret(toInt256(shares_raw) * toInt256(concat('1', repeat('0', 18 - share_decimals))), 'Decimal256(18)'))) AS shares,
  intDiv(ifNull(c.price_e18, toInt256(0)) * toInt256(reinterpretAsInt128(r.base_asset_usd_price)), toInt256('1000000000000000000')) AS share_usd_e18,
  intDiv(share_usd_e18 * toInt256(shares_raw), toInt256(concat('1', repeat('0', share_decimals)))) AS value_usd_e18,
  toFloat64(toString(reinterpret(value_usd_e18, 'Decimal256(18)'))) AS value_usd
FROM (
  SELECT toString(vault) AS vault, chain_id, queue, request_id, deadline, amount FROM {{db}}.redemption_requests
  WHERE state IN ('open', 'expired')
) AS q
INNER JOIN {{db}}.vault_registry AS r ON r.slug = q.vault
LEFT JOIN {{db}}.vault_chain_decimals AS d ON d.vault = q.vault AND d.chain_id = q.chain_id
LEFT JOIN {{db}}.vault_price_current AS c ON c.vault = q.vault
COMMENT 'Unfilled, uncancelled redemption requests with their USD value at the current share price; is_open = 1 are the pending ones (details pendingRedemptions, pendingRedemptionsValue, shortfall)';

CREATE VIEW IF NOT EXISTS {{db}}.fees_daily_by_kind {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  day Date COMMENT 'UTC day (days with any fee or claim)',
  management_usd Float64 COMMENT 'Management fee accrued, USD',
  performance_usd Float64 COMMENT 'Performance fee accrued, USD',
  instant_redemption_usd Float64 COMMENT 'Instant-redemption fees charged, USD',
  deposit_usd Float64 COMMENT 'Deposit fees charged, USD',
  redemption_usd Float64 COMMENT 'Redemption fees charged, USD',
  accrued_usd Float64 COMMENT 'Fees accrued or charged (the five kinds above, claims excluded: safe to sum), USD',
  claimed_usd Float64 COMMENT 'Fees claimed (paid out of accrued fees: never add to accrued_usd), USD',
  accrued_usd_e18 Int256 COMMENT 'accrued_usd exact, USD scaled by 1e18',
  claimed_usd_e18 Int256 COMMENT 'claimed_usd exact, USD scaled by 1e18'
) AS
SELECT vault, day,
  toFloat64(toString(reinterpret(sumIf(e18, kind = 'MANAGEMENT'), 'Decimal256(18)'))) AS management_usd,
  toFloat64(toString(reinterpret(sumIf(e18, kind = 'PERFORMANCE'), 'Decimal256(18)'))) AS performance_usd,
  toFloat64(toString(reinterpret(sumIf(e18, kind = 'INSTANT_REDEMPTION'), 'Decimal256(18)'))) AS instant_redemption_usd,
  toFloat64(toString(reinterpret(sumIf(e18, kind = 'DEPOSIT'), 'Decimal256(18)'))) AS deposit_usd,
  toFloat64(toString(reinterpret(sumIf(e18, kind = 'REDEMPTION'), 'Decimal256(18)'))) AS redemption_usd,
  sumIf(e18, kind != 'CLAIMED') AS accrued_usd_e18, sumIf(e18, kind = 'CLAIMED') AS claimed_usd_e18,
  toFloat64(toString(reinterpret(accrued_usd_e18, 'Decimal256(18)'))) AS accrued_usd,
  toFloat64(toString(reinterpret(claimed_usd_e18, 'Decimal256(18)'))) AS claimed_usd
FROM (SELECT toString(vault) AS vault, day, toString(kind) AS kind, toInt256(usd_e18) AS e18 FROM {{db}}.fees_daily)
GROUP BY vault, day
COMMENT 'Fees per vault and UTC day, one column per kind; claimed amounts in their own column so sum(accrued_usd) never double counts (the fees endpoint)';
