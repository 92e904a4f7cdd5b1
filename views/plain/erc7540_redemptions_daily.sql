-- Each ERC-7540 controller's redemption state at the end of every UTC day from its first event
-- on: the state the last event at or before as_of left (erc7540_redemption_history), as_of being
-- the day's last second, now for today. Days without an event carry the state on.
CREATE OR REPLACE VIEW {{db}}.erc7540_redemptions_daily {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain of the NestVault',
  queue String COMMENT 'NestVault (ERC-7540 vault) address',
  controller String COMMENT 'Controller of the request',
  day Date COMMENT 'UTC day, from the day of the controller''s first event to today',
  as_of DateTime('UTC') COMMENT 'Time the state is taken at: the end of the day, now for today',
  pending_shares Int256 COMMENT 'Shares pending at as_of: pendingRedeemRequest(0, controller) at the last block at or before it, raw units',
  claimable_shares Int256 COMMENT 'Shares claimable at as_of: claimableRedeemRequest(0, controller), raw units',
  claimable_assets Int256 COMMENT 'Assets claimable at as_of: maxWithdraw(controller), raw want-token units',
  want_decimals UInt8 COMMENT 'Decimals of the asset the redemptions pay'
) AS
SELECT c.vault AS vault, c.chain_id AS chain_id, c.queue AS queue, c.controller AS controller, day,
  toDateTime(least(toUInt32(toDateTime(day, 'UTC')) + 86399, toUInt32(now('UTC'))), 'UTC') AS as_of,
  arrayLast(e -> e.1 <= toUInt32(as_of), c.events) AS last,
  last.4 AS pending_shares, last.5 AS claimable_shares, last.6 AS claimable_assets, c.want_decimals AS want_decimals
FROM (
  SELECT vault, chain_id, queue, controller, any(want_decimals) AS want_decimals, toDate(min(block_time)) AS first_day,
    arraySort(e -> (e.2, e.3),
      groupArray((toUInt32(block_time), block_number, log_index, pending_shares, claimable_shares, claimable_assets))) AS events
  FROM {{db}}.erc7540_redemption_history
  GROUP BY vault, chain_id, queue, controller
) AS c
ARRAY JOIN arrayMap(i -> c.first_day + i, range(toUInt32(toDate(now('UTC')) - c.first_day) + 1)) AS day
COMMENT 'Each ERC-7540 (NestVault) controller''s pending shares, claimable shares and claimable assets at the end of every UTC day (now for today), as the vault''s views answer at that day''s last block';
