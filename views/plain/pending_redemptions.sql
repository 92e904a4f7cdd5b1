-- The pending redemptions of both kinds of queue: an AtomicQueue request (redemption_requests)
-- is pending until it is filled or cancelled and while its deadline is ahead; an ERC-7540
-- controller (erc7540_redemptions) has pendingRedeemRequest(0, controller) pending (its
-- requests less what was fulfilled or taken off by updateRedeem; no deadline: it reads as the
-- latest DateTime), and what is already claimable is not pending.
-- The share decimals of a chain come from the registry row it already joins
-- (vault_chain_decimals' formula), not from a join of vault_chain_decimals: each view reference
-- inlined into a query costs its planning again.
CREATE OR REPLACE VIEW {{db}}.pending_redemptions {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain of the redemption queue',
  queue_kind String COMMENT 'atomic_queue (an AtomicQueue request) or erc7540 (an ERC-7540 controller of a NestVault)',
  queue String COMMENT 'Queue contract address (AtomicQueue or NestVault)',
  request_id String COMMENT 'Request id within the queue (ERC-7540: the controller)',
  deadline DateTime('UTC') COMMENT 'Deadline of the request, UTC: it is pending while deadline > now (ERC-7540: none, the latest DateTime)',
  is_open UInt8 COMMENT '1 when the request is pending now (deadline after now): count it in pendingRedemptions',
  shares_raw UInt256 COMMENT 'Shares pending: AtomicQueue, the latest update; ERC-7540, pendingRedeemRequest(0, controller) (requested - fulfilled - decreased). Raw units',
  share_decimals UInt8 COMMENT 'Share decimals on the chain',
  shares Float64 COMMENT 'Shares requested, decimal-adjusted',
  share_usd_e18 Int256 COMMENT 'Current share price in USD scaled by 1e18: vault_price_current.price_e18 * base asset USD / 1e18',
  value_usd_e18 Int256 COMMENT 'USD value of the shares scaled by 1e18: share_usd_e18 * shares_raw / 10^share_decimals (the API truncates once per chain: sum shares_raw first)',
  value_usd Float64 COMMENT 'USD value of the shares at the current share price'
) AS
SELECT q.vault AS vault, q.chain_id AS chain_id, q.queue_kind AS queue_kind, q.queue AS queue, q.request_id AS request_id, q.deadline AS deadline,
  toUInt8(q.deadline > now('UTC')) AS is_open, q.amount AS shares_raw,
  arrayFirst(m -> mapContains(m, toString(q.chain_id)), JSONExtract(r.info, 'decimalsOverride', 'Array(Map(String, UInt8))')) AS dov,
  multiIf(mapContains(dov, toString(q.chain_id)), dov[toString(q.chain_id)],
    q.chain_id = {{solana_chain_id}} AND JSONType(r.info, 'solana') = 'Object', toUInt8(JSONExtractUInt(r.info, 'solana', 'decimals')), r.decimals) AS share_decimals,
  toFloat64(toString(reinterpret(toInt256(shares_raw) * toInt256(concat('1', repeat('0', 18 - share_decimals))), 'Decimal256(18)'))) AS shares,
  intDiv(ifNull(c.price_e18, toInt256(0)) * toInt256(reinterpretAsInt128(r.base_asset_usd_price)), toInt256('1000000000000000000')) AS share_usd_e18,
  intDiv(share_usd_e18 * toInt256(shares_raw), toInt256(concat('1', repeat('0', share_decimals)))) AS value_usd_e18,
  toFloat64(toString(reinterpret(value_usd_e18, 'Decimal256(18)'))) AS value_usd
FROM (
  SELECT CAST(vault, 'String') AS vault, chain_id, 'atomic_queue' AS queue_kind, queue, request_id, deadline, amount
  FROM {{db}}.redemption_requests WHERE state IN ('open', 'expired')
  UNION ALL
  SELECT vault, chain_id, 'erc7540' AS queue_kind, queue, controller AS request_id, toDateTime(4294967295, 'UTC') AS deadline,
    toUInt256(pending_shares) AS amount
  FROM {{db}}.erc7540_redemptions WHERE pending_shares > 0
) AS q
INNER JOIN {{db}}.vault_registry AS r ON r.slug = q.vault
LEFT JOIN {{db}}.vault_price_current AS c ON c.vault = q.vault
COMMENT 'Pending redemptions with their USD value at the current share price: unfilled, uncancelled AtomicQueue requests (is_open = 1: deadline ahead) and each ERC-7540 controller''s pendingRedeemRequest (details pendingRedemptions, pendingRedemptionsValue, shortfall)';
