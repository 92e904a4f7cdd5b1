-- The day grid starts at the vault's first snapshot instead of re-reading every rate.
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
    SELECT CAST(vault, 'String') AS vault, arrayJoin(arrayMap(i -> toDate(min(ts)) + i, range(toUInt32(today() - toDate(min(ts))) + 1))) AS day
    FROM {{db}}.snapshots_raw FINAL WHERE kind = 'ASSET_BALANCE' GROUP BY vault
  ) AS g INNER JOIN assets AS a ON a.vault = g.vault
),
snaps AS (
  SELECT CAST(vault, 'String') AS vault, kind, chain_id, lower(token) AS token, toUInt32(ts) AS t, amount, usd_price, toUInt8(1) AS found
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
COMMENT 'Liquid funds per vault, UTC day and configured liquid asset (docs/architecture.md#units-and-formulas, liquidFunds; from the snapshots)';
