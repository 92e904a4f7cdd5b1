-- The AtomicQueue's rules: one request per (user, offer, want) whose latest update holds its amount,
-- filled whole or cancelled (an update to zero). ERC-7540 redemptions follow the standard's
-- rules instead (erc7540_redemption_history).
CREATE OR REPLACE VIEW {{db}}.redemption_requests {{on_cluster}} AS
SELECT vault, chain_id, queue, request_id,
  argMaxIf(amount, (block_number, log_index), kind = 'REQUEST') AS amount,
  argMaxIf(min_price, (block_number, log_index), kind = 'REQUEST') AS min_price,
  argMaxIf(deadline, (block_number, log_index), kind = 'REQUEST') AS deadline,
  argMaxIf(block_time, (block_number, log_index), kind = 'REQUEST') AS requested_at,
  argMaxIf(tx_hash, (block_number, log_index), kind = 'REQUEST') AS request_tx_hash,
  any(user) AS user, any(offer_token) AS offer_token, any(want_token) AS want_token, any(want_decimals) AS want_decimals,
  maxIf((block_number, log_index), kind = 'REQUEST') AS last_request_pos,
  maxIf((block_number, log_index), kind = 'FILL') AS last_fill_pos,
  maxIf((block_number, log_index), kind = 'CANCEL') AS last_cancel_pos,
  multiIf(last_cancel_pos > last_request_pos, 'cancelled', last_fill_pos > last_request_pos, 'filled',
    amount = 0, 'cancelled', deadline <= now('UTC'), 'expired', 'open') AS state
FROM {{db}}.redemptions_raw FINAL WHERE removed = 0 AND kind IN ('REQUEST', 'FILL', 'CANCEL')
GROUP BY vault, chain_id, queue, request_id
COMMENT 'Latest state of each AtomicQueue redemption request: open, filled, cancelled or expired (deadline passed, unfilled); ERC-7540 redemptions are in erc7540_redemptions';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN vault 'Vault slug';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN chain_id 'Chain of the queue';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN queue 'Queue contract address';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN request_id 'Request id within the queue';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN amount 'Shares of the latest REQUEST update, raw units';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN min_price 'Limit price of the latest update, want-token raw units';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN deadline 'Deadline of the latest update, UTC';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN requested_at 'Block time of the latest REQUEST update, UTC';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN request_tx_hash 'Transaction of the latest REQUEST update';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN user 'Requesting account';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN offer_token 'Share token offered';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN want_token 'Token wanted';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN want_decimals 'Decimals of the want token';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN last_request_pos '(block_number, log_index) of the latest REQUEST';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN last_fill_pos '(block_number, log_index) of the latest FILL ((0, 0) when none)';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN last_cancel_pos '(block_number, log_index) of the latest CANCEL ((0, 0) when none)';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN state 'open, filled, cancelled or expired (deadline passed unfilled, by the server clock)';
