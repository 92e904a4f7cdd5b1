-- Redemption requests valued when they were made: the latest rate at or before the request on
-- the vault's price chain (vault_price_current.chain_id), times the base asset's USD price. An
-- AtomicQueue request is its latest update; an ERC-7540 request is each REDEEM_REQUEST, with its
-- controller's state (a controller's requests add up: they have no state of their own).
CREATE OR REPLACE VIEW {{db}}.redemption_values {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain of the queue',
  queue String COMMENT 'Queue contract address',
  request_id String COMMENT 'Request id within the queue (ERC-7540: the controller)',
  state String COMMENT 'AtomicQueue: open, filled, cancelled or expired (redemption_requests.state); ERC-7540: the controller''s state, pending, claimable or done (erc7540_redemptions.state)',
  requested_at DateTime('UTC') COMMENT 'Block time of the latest REQUEST update (ERC-7540: of the request), UTC',
  shares_raw UInt256 COMMENT 'Shares requested, raw units',
  share_decimals UInt8 COMMENT 'Share decimals on the queue chain (vault_chain_decimals)',
  rate_at_request UInt256 COMMENT 'Latest rate on the price chain at or before requested_at, base-asset raw units (0 when none was known yet)',
  rate_decimals UInt8 COMMENT 'Decimals of rate_at_request',
  share_usd_at_request_e18 Int256 COMMENT 'USD value of one whole share at the request, scaled by 1e18: rate_at_request * base-asset USD / 10^rate_decimals (truncated)',
  value_usd_at_request_e18 Int256 COMMENT 'USD value of the requested shares at the request, scaled by 1e18: share_usd_at_request_e18 * shares_raw / 10^share_decimals (truncated)',
  value_usd_at_request Float64 COMMENT 'USD value of the requested shares at the request'
) AS
SELECT q.vault AS vault, q.chain_id AS chain_id, q.queue AS queue, q.request_id AS request_id, q.state AS state,
  q.requested_at AS requested_at, q.amount AS shares_raw, d.share_decimals AS share_decimals,
  r.rate AS rate_at_request, r.rate_decimals AS rate_decimals,
  intDiv(toInt256(r.rate) * toInt256(reinterpretAsInt128(g.base_asset_usd_price)),
    toInt256(concat('1', repeat('0', r.rate_decimals)))) AS share_usd_at_request_e18,
  intDiv(share_usd_at_request_e18 * toInt256(q.amount), toInt256(concat('1', repeat('0', d.share_decimals)))) AS value_usd_at_request_e18,
  toFloat64(toString(reinterpret(value_usd_at_request_e18, 'Decimal256(18)'))) AS value_usd_at_request
FROM (
  SELECT CAST(q.vault, 'String') AS vault, q.chain_id AS chain_id, q.queue AS queue, q.request_id AS request_id, q.state AS state,
    q.requested_at AS requested_at, q.amount AS amount, p.chain_id AS price_chain
  FROM (
    SELECT CAST(vault, 'String') AS vault, chain_id, queue, request_id, state, requested_at, amount
    FROM {{db}}.redemption_requests
    UNION ALL
    SELECT h.vault, h.chain_id, h.queue, h.controller, c.state, h.block_time, h.shares
    FROM {{db}}.erc7540_redemption_history AS h
    INNER JOIN {{db}}.erc7540_redemptions AS c
      ON c.vault = h.vault AND c.chain_id = h.chain_id AND c.queue = h.queue AND c.controller = h.controller
    WHERE h.kind = 'REDEEM_REQUEST'
  ) AS q
  LEFT JOIN (SELECT vault, chain_id FROM {{db}}.vault_price_current) AS p ON p.vault = CAST(q.vault, 'String')
) AS q
LEFT JOIN {{db}}.vault_chain_decimals AS d ON d.vault = q.vault AND d.chain_id = q.chain_id
LEFT JOIN {{db}}.vault_registry AS g ON g.slug = q.vault
ASOF LEFT JOIN (
  SELECT CAST(vault, 'String') AS vault, chain_id, block_time, rate, rate_decimals FROM {{db}}.rates
) AS r ON r.vault = q.vault AND r.chain_id = q.price_chain AND q.requested_at >= r.block_time
COMMENT 'Each redemption request with the USD value of its shares at the time it was made (pending_redemptions values the open ones at the current price)';
