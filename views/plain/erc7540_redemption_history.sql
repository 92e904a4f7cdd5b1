-- ERC-7540 redemptions (a NestVault's REDEEM_* rows of redemptions_raw), each event of a
-- controller with the state it leaves, as the vault keeps it (requestId is always 0): the
-- controller's requests add up into what is pending, a fulfilment moves all or part of it to
-- claimable with the assets it credits, updateRedeem takes shares off what is pending, and a
-- claim (redeem or withdraw, by the controller or its operator) takes the shares and assets it
-- pays off what is claimable. The running sums after an event are the vault's
-- pendingRedeemRequest(0, controller), claimableRedeemRequest(0, controller) and
-- maxWithdraw(controller) at that point. The AtomicQueue's rows are redemption_requests'.
CREATE OR REPLACE VIEW {{db}}.erc7540_redemption_history {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain of the NestVault',
  queue String COMMENT 'NestVault (ERC-7540 vault) address',
  controller String COMMENT 'Controller whose request the event changes',
  block_number UInt64 COMMENT 'Block of the event',
  log_index UInt32 COMMENT 'Log index of the event',
  block_time DateTime('UTC') COMMENT 'Block time of the event, UTC',
  tx_hash String COMMENT 'Transaction of the event',
  kind String COMMENT 'REDEEM_REQUEST (shares added to what is pending), REDEEM_FULFILLED (pending shares made claimable), REDEEM_DECREASED (pending shares taken off by updateRedeem) or REDEEM_CLAIMED (claimable shares and assets paid out)',
  shares UInt256 COMMENT 'Shares the event adds or takes off, raw units',
  assets UInt256 COMMENT 'REDEEM_FULFILLED: assets made claimable (after the redemption fee); REDEEM_CLAIMED: assets paid; else 0. Raw want-token units',
  want_token String COMMENT 'Asset the redemption pays',
  want_decimals UInt8 COMMENT 'Decimals of want_token',
  pending_shares Int256 COMMENT 'Shares pending after the event (pendingRedeemRequest), raw units',
  claimable_shares Int256 COMMENT 'Shares claimable after the event (claimableRedeemRequest), raw units',
  claimable_assets Int256 COMMENT 'Assets claimable after the event (maxWithdraw), raw want-token units'
) AS
SELECT CAST(vault, 'String') AS vault, chain_id, queue, request_id AS controller, block_number, log_index, block_time,
  tx_hash, CAST(kind, 'String') AS kind, amount AS shares, assets, want_token, want_decimals,
  sum(multiIf(kind = 'REDEEM_REQUEST', toInt256(amount),
    kind IN ('REDEEM_FULFILLED', 'REDEEM_DECREASED'), -toInt256(amount), toInt256(0))) OVER w AS pending_shares,
  sum(multiIf(kind = 'REDEEM_FULFILLED', toInt256(amount), kind = 'REDEEM_CLAIMED', -toInt256(amount), toInt256(0))) OVER w
    AS claimable_shares,
  sum(multiIf(kind = 'REDEEM_FULFILLED', toInt256(assets), kind = 'REDEEM_CLAIMED', -toInt256(assets), toInt256(0))) OVER w
    AS claimable_assets
FROM {{db}}.redemptions_raw FINAL
WHERE removed = 0 AND kind IN ('REDEEM_REQUEST', 'REDEEM_FULFILLED', 'REDEEM_DECREASED', 'REDEEM_CLAIMED')
WINDOW w AS (PARTITION BY vault, chain_id, queue, request_id ORDER BY block_number, log_index
  ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
COMMENT 'ERC-7540 (NestVault) redemption events per controller with the state each leaves: pending, claimable shares and claimable assets, as the vault''s pendingRedeemRequest, claimableRedeemRequest and maxWithdraw then';
