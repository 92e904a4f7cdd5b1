-- Faster forms of two views, same columns, types, comments and values (views-parity.test.ts;
-- bench/views.ts times them). On the bench data almost all of a metric view's time is query
-- analysis and planning, not execution (EXPLAIN of vault_liquidity_daily: 126 ms of the query's
-- 151), so each view reference inlined into a query costs its planning again.
-- - tvl_chain_daily and pending_redemptions take the share decimals of a chain from the
--   registry row they already join (the decimalsOverride entry, else the Solana mint decimals
--   for 101, else the vault decimals: vault_chain_decimals' formula) instead of joining
--   vault_chain_decimals, which re-reads the registry twice, supply_deltas_daily and
--   redemptions_raw. Their (vault, chain) pairs come from supply_deltas_daily and
--   redemptions_raw of a registered vault, which vault_chain_decimals always lists.
-- On bench/views.ts's generated data (3 vaults), side by side at machine load 1.4: tvl_chain_daily
-- 57 -> 48 ms, pending_redemptions 33 -> 24 ms, vault_liquidity_daily 143 -> 122 ms (medians).

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
    s.chain_id = 101 AND JSONType(r.info, 'solana') = 'Object', toUInt8(JSONExtractUInt(r.info, 'solana', 'decimals')), r.decimals) AS share_decimals,
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
LEFT JOIN (SELECT vault, day, groupArray((chain_id, price_e18)) AS closes FROM {{db}}.price_close_daily GROUP BY vault, day) AS cl
  ON cl.vault = s.vault AND cl.day = s.day
LEFT JOIN (SELECT vault, chain_id, toUInt8(1) AS found FROM {{db}}.vault_price_current) AS pcur ON pcur.vault = s.vault
COMMENT 'TVL per (vault, chain, UTC day) at that chain''s own close price (DESIGN section 8 tvl); sum the chains with vault_tvl_daily';

CREATE OR REPLACE VIEW {{db}}.pending_redemptions {{on_cluster}} (
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
  toUInt8(q.deadline > now('UTC')) AS is_open, q.amount AS shares_raw,
  arrayFirst(m -> mapContains(m, toString(q.chain_id)), JSONExtract(r.info, 'decimalsOverride', 'Array(Map(String, UInt8))')) AS dov,
  multiIf(mapContains(dov, toString(q.chain_id)), dov[toString(q.chain_id)],
    q.chain_id = 101 AND JSONType(r.info, 'solana') = 'Object', toUInt8(JSONExtractUInt(r.info, 'solana', 'decimals')), r.decimals) AS share_decimals,
  toFloat64(toString(reinterpret(toInt256(shares_raw) * toInt256(concat('1', repeat('0', 18 - share_decimals))), 'Decimal256(18)'))) AS shares,
  intDiv(ifNull(c.price_e18, toInt256(0)) * toInt256(reinterpretAsInt128(r.base_asset_usd_price)), toInt256('1000000000000000000')) AS share_usd_e18,
  intDiv(share_usd_e18 * toInt256(shares_raw), toInt256(concat('1', repeat('0', share_decimals)))) AS value_usd_e18,
  toFloat64(toString(reinterpret(value_usd_e18, 'Decimal256(18)'))) AS value_usd
FROM (
  SELECT toString(vault) AS vault, chain_id, queue, request_id, deadline, amount FROM {{db}}.redemption_requests
  WHERE state IN ('open', 'expired')
) AS q
INNER JOIN {{db}}.vault_registry AS r ON r.slug = q.vault
LEFT JOIN {{db}}.vault_price_current AS c ON c.vault = q.vault
COMMENT 'Unfilled, uncancelled redemption requests with their USD value at the current share price; is_open = 1 are the pending ones (details pendingRedemptions, pendingRedemptionsValue, shortfall)';
