-- Reads the daily closes once: per (vault, day) the closes of every chain as an array, from
-- which it takes the chain's own close, else the price chain's (vault_price_current), instead
-- of joining price_close_daily and vault_price_daily. The share decimals of a chain come from
-- the registry row it already joins (vault_chain_decimals' formula: the decimalsOverride entry,
-- else the Solana mint decimals for 101, else the vault decimals): each view reference inlined
-- into a query costs its planning again, and planning is most of a metric view's time.
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
SELECT s.vault AS vault, s.chain_id AS chain_id, s.day AS day, s.supply_raw AS supply_raw,
  arrayFirst(m -> mapContains(m, toString(s.chain_id)), JSONExtract(r.info, 'decimalsOverride', 'Array(Map(String, UInt8))')) AS dov,
  multiIf(mapContains(dov, toString(s.chain_id)), dov[toString(s.chain_id)],
    s.chain_id = {{solana_chain_id}} AND JSONType(r.info, 'solana') = 'Object', toUInt8(JSONExtractUInt(r.info, 'solana', 'decimals')), r.decimals) AS share_decimals,
  arrayFirstIndex(c -> c.1 = s.chain_id, cl.closes) AS own_i,
  if(pcur.found = 1, arrayFirstIndex(c -> c.1 = pcur.chain_id, cl.closes), 0) AS pc_i,
  multiIf(own_i > 0, cl.closes[own_i].2, pc_i > 0, cl.closes[pc_i].2, toInt256(0)) AS price_e18,
  toLowCardinality(multiIf(own_i > 0, 'chain', pc_i > 0, 'price_chain', 'none')) AS price_source,
  toInt256(reinterpretAsInt128(r.base_asset_usd_price)) AS base_asset_usd_e18,
  intDiv(intDiv(price_e18 * base_asset_usd_e18, toInt256('1000000000000000000')) * supply_raw,
    toInt256(concat('1', repeat('0', share_decimals)))) AS tvl_usd_e18,
  toFloat64(toString(reinterpret(tvl_usd_e18, 'Decimal256(18)'))) AS tvl_usd
FROM (SELECT CAST(vault, 'String') AS vault, chain_id, day, toInt256(supply_raw) AS supply_raw FROM {{db}}.supply_daily) AS s
INNER JOIN {{db}}.vault_registry AS r ON r.slug = s.vault
LEFT JOIN (SELECT vault, day, groupArray((chain_id, price_e18)) AS closes FROM {{db}}.price_close_daily GROUP BY vault, day) AS cl
  ON cl.vault = s.vault AND cl.day = s.day
LEFT JOIN (SELECT vault, chain_id, toUInt8(1) AS found FROM {{db}}.vault_price_current) AS pcur ON pcur.vault = s.vault
COMMENT 'TVL per (vault, chain, UTC day) at that chain''s own close price (docs/architecture.md#units-and-formulas, tvl); sum the chains with vault_tvl_daily';
