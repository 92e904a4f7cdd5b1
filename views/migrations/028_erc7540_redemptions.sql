-- ERC-7540 redemptions (NestVault) are recorded as they change a controller's state: shares
-- requested, fulfilled (with the assets made claimable), decreased and claimed (with the assets
-- paid), kinds REDEEM_* of redemptions.v2. A fulfilment's and a claim's assets need a column;
-- the AtomicQueue's rows keep 0 there.
ALTER TABLE {{db}}.redemptions_raw {{on_cluster}}
  ADD COLUMN IF NOT EXISTS assets UInt256 DEFAULT 0
  COMMENT 'REDEEM_FULFILLED: assets made claimable (after the redemption fee); REDEEM_CLAIMED: assets paid; else 0. Raw want-token units';
ALTER TABLE {{db}}.redemptions_raw {{on_cluster}}
  MODIFY COMMENT 'Redemption-queue requests, fills and cancellations (AtomicQueue), and ERC-7540 requests, fulfilments, decreases and claims (REDEEM_* kinds)';
ALTER TABLE {{db}}.redemptions_raw {{on_cluster}}
  COMMENT COLUMN kind 'AtomicQueue: REQUEST (new or updated), FILL, CANCEL; ERC-7540: REDEEM_REQUEST, REDEEM_FULFILLED, REDEEM_DECREASED, REDEEM_CLAIMED';
ALTER TABLE {{db}}.redemptions_raw {{on_cluster}}
  COMMENT COLUMN amount 'Shares (REQUEST: new amount; FILL: filled; REDEEM_*: the shares the event adds to or takes off the state of its controller)';
