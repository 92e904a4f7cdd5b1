CREATE OR REPLACE VIEW {{db}}.vault_price_current {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Price chain: the primary chain (service_settings) when it has a rate, else the chain with the most recent rate; the vault price history is this chain''s closes',
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
  SELECT vault, argMax((chain_id, rate, rate_decimals, updated_at, is_paused), (chain_id = s.primary_chain, updated_at)) AS t
  FROM (
    SELECT CAST(vault, 'String') AS vault, chain_id, argMax(rate, (block_time, block_number, log_index)) AS rate,
      argMax(rate_decimals, (block_time, block_number, log_index)) AS rate_decimals, max(block_time) AS updated_at,
      argMax(is_paused, (block_time, block_number, log_index)) AS is_paused
    FROM {{db}}.rates GROUP BY vault, chain_id
  ) AS latest
  CROSS JOIN (SELECT any(primary_chain_id) AS primary_chain FROM {{db}}.service_settings FINAL) AS s
  GROUP BY vault, s.primary_chain
)
COMMENT 'Current share price per vault (details tokenPrice): the latest rate on the price chain';
