-- Each ERC-7540 controller's redemption state now: the state its last event left
-- (erc7540_redemption_history), and what it requested, had fulfilled, decreased and claimed.
CREATE OR REPLACE VIEW {{db}}.erc7540_redemptions {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain of the NestVault',
  queue String COMMENT 'NestVault (ERC-7540 vault) address',
  controller String COMMENT 'Controller of the request',
  pending_shares Int256 COMMENT 'Shares pending now: pendingRedeemRequest(0, controller), raw units (requested - fulfilled - decreased)',
  claimable_shares Int256 COMMENT 'Shares claimable now: claimableRedeemRequest(0, controller), raw units (fulfilled - claimed)',
  claimable_assets Int256 COMMENT 'Assets claimable now: maxWithdraw(controller), raw want-token units (credited at fulfilment - claimed)',
  requested_shares UInt256 COMMENT 'Shares requested in all (every REDEEM_REQUEST), raw units',
  fulfilled_shares UInt256 COMMENT 'Shares fulfilled in all, raw units',
  decreased_shares UInt256 COMMENT 'Shares taken off pending requests by updateRedeem in all, raw units',
  claimed_shares UInt256 COMMENT 'Shares claimed in all, raw units',
  fulfilled_assets UInt256 COMMENT 'Assets made claimable in all (after the redemption fee), raw want-token units',
  claimed_assets UInt256 COMMENT 'Assets claimed in all, raw want-token units',
  want_token String COMMENT 'Asset the redemptions pay',
  want_decimals UInt8 COMMENT 'Decimals of want_token',
  first_requested_at DateTime('UTC') COMMENT 'Block time of the first request, UTC',
  last_event_at DateTime('UTC') COMMENT 'Block time of the latest event, UTC',
  state String COMMENT 'pending (shares pending), claimable (nothing pending, shares claimable) or done'
) AS
SELECT h.vault AS vault, h.chain_id AS chain_id, h.queue AS queue, h.controller AS controller,
  argMax(h.pending_shares, (h.block_number, h.log_index)) AS pending_shares,
  argMax(h.claimable_shares, (h.block_number, h.log_index)) AS claimable_shares,
  argMax(h.claimable_assets, (h.block_number, h.log_index)) AS claimable_assets,
  sumIf(h.shares, h.kind = 'REDEEM_REQUEST') AS requested_shares,
  sumIf(h.shares, h.kind = 'REDEEM_FULFILLED') AS fulfilled_shares,
  sumIf(h.shares, h.kind = 'REDEEM_DECREASED') AS decreased_shares,
  sumIf(h.shares, h.kind = 'REDEEM_CLAIMED') AS claimed_shares,
  sumIf(h.assets, h.kind = 'REDEEM_FULFILLED') AS fulfilled_assets,
  sumIf(h.assets, h.kind = 'REDEEM_CLAIMED') AS claimed_assets,
  any(h.want_token) AS want_token, any(h.want_decimals) AS want_decimals,
  minIf(h.block_time, h.kind = 'REDEEM_REQUEST') AS first_requested_at, max(h.block_time) AS last_event_at,
  multiIf(pending_shares > 0, 'pending', claimable_shares > 0, 'claimable', 'done') AS state
FROM {{db}}.erc7540_redemption_history AS h
GROUP BY h.vault, h.chain_id, h.queue, h.controller
COMMENT 'Each ERC-7540 (NestVault) controller''s redemption state now: pending shares, claimable shares and assets (pendingRedeemRequest, claimableRedeemRequest, maxWithdraw) and the totals behind them';
