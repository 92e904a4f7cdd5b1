-- Precomputed metrics (docs/architecture.md#precomputed-metrics), current state: the unfilled,
-- uncancelled redemption requests with their share price, as pending_redemptions computes them,
-- written by views/settle.ts for the vaults whose redemptions, rates or registry changed. The
-- API counts the ones whose deadline is after its clock (pendingRedemptions, their value, the
-- shortfall).

CREATE TABLE IF NOT EXISTS {{db}}.metrics_pending_redemptions {{on_cluster}} (
  vault LowCardinality(String) COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain of the redemption queue',
  queue String COMMENT 'Queue contract address',
  request_id String COMMENT 'Request id within the queue',
  deadline DateTime('UTC') COMMENT 'Deadline of the request, UTC: it is pending while deadline > now',
  shares_raw UInt256 COMMENT 'Shares requested (latest update), raw units',
  share_decimals UInt8 COMMENT 'Share decimals on the chain',
  share_usd_e18 Int256 COMMENT 'Current share price in USD scaled by 1e18',
  version UInt64 COMMENT 'Settle version that wrote the row (the highest wins)',
  deleted UInt8 COMMENT '1 = tombstone: filled, cancelled or retracted since'
) ENGINE = ReplacingMergeTree(version, deleted)
ORDER BY (vault, chain_id, queue, request_id)
COMMENT 'Unfilled, uncancelled redemption requests and the share price they are valued at, as pending_redemptions computes them (views/settle.ts)';
