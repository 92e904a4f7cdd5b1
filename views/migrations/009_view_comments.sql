-- Column meanings and units for the views of 003 and 006 (docs/views.md had none): COMMENT
-- COLUMN only, the views' queries are untouched. IF EXISTS: a later redefinition of a view
-- with fewer columns does not fail this migration.

-- vault_daily (003) priced every chain at one vault-wide close (the latest rate of any chain);
-- the API prices each chain at its own close (DESIGN section 8 tvl). Same columns, now from
-- tvl_chain_daily, so its tvl_usd_float sums to the TVL the API serves.
DROP VIEW IF EXISTS {{db}}.vault_daily {{on_cluster}};

CREATE VIEW IF NOT EXISTS {{db}}.vault_daily {{on_cluster}} AS
SELECT t.vault AS vault, t.chain_id AS chain_id, t.day AS day, t.supply_raw AS supply_raw, t.share_decimals AS decimals,
  if(t.price_source = 'chain', own.close_rate, pcd.close_rate) AS close_rate,
  if(t.price_source = 'chain', own.rate_decimals, pcd.rate_decimals) AS rate_decimals,
  toFloat64(toString(reinterpret(t.price_e18, 'Decimal256(18)'))) AS price_float,
  r.base_asset_usd_price AS base_asset_usd_price, t.tvl_usd AS tvl_usd_float
FROM {{db}}.tvl_chain_daily AS t
INNER JOIN {{db}}.vault_registry AS r ON r.slug = t.vault
LEFT JOIN {{db}}.price_close_daily AS own ON own.vault = t.vault AND own.chain_id = t.chain_id AND own.day = t.day
LEFT JOIN {{db}}.vault_price_current AS pc ON pc.vault = t.vault
LEFT JOIN {{db}}.price_close_daily AS pcd ON pcd.vault = t.vault AND pcd.chain_id = pc.chain_id AND pcd.day = t.day
COMMENT 'Per (vault, chain, UTC day): supply, the close price used for the chain (its own, else the vault price chain) and TVL in USD at that price; vault totals: vault_tvl_daily';

ALTER TABLE {{db}}.balances {{on_cluster}} COMMENT COLUMN IF EXISTS vault 'Vault slug';
ALTER TABLE {{db}}.balances {{on_cluster}} COMMENT COLUMN IF EXISTS chain_id 'Chain id; 101 for Solana';
ALTER TABLE {{db}}.balances {{on_cluster}} COMMENT COLUMN IF EXISTS holder 'Holder address (EVM lower-case hex, Solana base58)';
ALTER TABLE {{db}}.balances {{on_cluster}} COMMENT COLUMN IF EXISTS token 'Share token address or Solana mint';
ALTER TABLE {{db}}.balances {{on_cluster}} COMMENT COLUMN IF EXISTS balance_raw 'Current balance, raw token units (non-zero)';
ALTER TABLE {{db}}.balances {{on_cluster}} COMMENT COLUMN IF EXISTS decimals 'Vault share decimals from the registry (decimalsOverride not applied: see vault_chain_decimals)';
ALTER TABLE {{db}}.balances {{on_cluster}} COMMENT COLUMN IF EXISTS balance_float 'balance_raw / 10^decimals, tokens (convenience, inexact)';
ALTER TABLE {{db}}.balances {{on_cluster}} COMMENT COLUMN IF EXISTS last_change 'Block time of the latest transfer touching this balance, UTC';

ALTER TABLE {{db}}.chain_watermarks {{on_cluster}} COMMENT COLUMN IF EXISTS chain_id 'Chain id; 101 for Solana';
ALTER TABLE {{db}}.chain_watermarks {{on_cluster}} COMMENT COLUMN IF EXISTS block_number 'Newest ingested block number (Solana: slot)';
ALTER TABLE {{db}}.chain_watermarks {{on_cluster}} COMMENT COLUMN IF EXISTS block_time 'Block time of the newest ingested block, UTC: the chain watermark';
ALTER TABLE {{db}}.chain_watermarks {{on_cluster}} COMMENT COLUMN IF EXISTS blocks_seen 'Number of canonical blocks ingested';

ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN IF EXISTS event_id 'Natural identity chainId:blockHash:logIndex';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN IF EXISTS chain_id 'Chain id';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN IF EXISTS block_number 'Block number';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN IF EXISTS block_hash 'Block hash';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN IF EXISTS block_time 'Block timestamp';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN IF EXISTS tx_hash 'Transaction hash';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN IF EXISTS log_index 'Log index';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN IF EXISTS vault 'Vault slug';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN IF EXISTS kind 'MANAGEMENT, PERFORMANCE, INSTANT_REDEMPTION, DEPOSIT, REDEMPTION, CLAIMED';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN IF EXISTS token 'Fee token';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN IF EXISTS amount 'Fee amount, raw units';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN IF EXISTS decimals 'Fee token decimals';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN IF EXISTS usd_price 'USD price of the fee token at the event';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN IF EXISTS usd_e18 'Exact USD value in units of 1e-18 USD (amount * price / 10^decimals)';
ALTER TABLE {{db}}.fees {{on_cluster}} COMMENT COLUMN IF EXISTS ingested_at 'When the consumer stored the row';

ALTER TABLE {{db}}.fees_daily {{on_cluster}} COMMENT COLUMN IF EXISTS vault 'Vault slug';
ALTER TABLE {{db}}.fees_daily {{on_cluster}} COMMENT COLUMN IF EXISTS day 'UTC day';
ALTER TABLE {{db}}.fees_daily {{on_cluster}} COMMENT COLUMN IF EXISTS kind 'Fee kind: MANAGEMENT, PERFORMANCE (accrued), INSTANT_REDEMPTION, DEPOSIT, REDEMPTION (charged) or CLAIMED (paid out of accrued fees: exclude it when summing, or use fees_daily_by_kind)';
ALTER TABLE {{db}}.fees_daily {{on_cluster}} COMMENT COLUMN IF EXISTS usd_e18 'Fee value, USD scaled by 1e18 (exact)';
ALTER TABLE {{db}}.fees_daily {{on_cluster}} COMMENT COLUMN IF EXISTS usd_float 'Fee value, USD (usd_e18 / 1e18, convenience)';

ALTER TABLE {{db}}.holder_counts_daily {{on_cluster}} COMMENT COLUMN IF EXISTS vault 'Vault slug';
ALTER TABLE {{db}}.holder_counts_daily {{on_cluster}} COMMENT COLUMN IF EXISTS chain_id 'Chain id; 101 for Solana';
ALTER TABLE {{db}}.holder_counts_daily {{on_cluster}} COMMENT COLUMN IF EXISTS day 'UTC day';
ALTER TABLE {{db}}.holder_counts_daily {{on_cluster}} COMMENT COLUMN IF EXISTS start 'Holder count at 00:00 (the sample of the previous hour), addresses';
ALTER TABLE {{db}}.holder_counts_daily {{on_cluster}} COMMENT COLUMN IF EXISTS end 'Holder count at the last hourly sample of the day, addresses';
ALTER TABLE {{db}}.holder_counts_daily {{on_cluster}} COMMENT COLUMN IF EXISTS min 'Lowest hourly sample of the day (from the first transfer on: see holder_history_daily), addresses';
ALTER TABLE {{db}}.holder_counts_daily {{on_cluster}} COMMENT COLUMN IF EXISTS max 'Highest hourly sample of the day, addresses';
ALTER TABLE {{db}}.holder_counts_daily {{on_cluster}} COMMENT COLUMN IF EXISTS average 'Mean of the hourly samples, addresses';
ALTER TABLE {{db}}.holder_counts_daily {{on_cluster}} COMMENT COLUMN IF EXISTS count 'Number of hourly samples of the day';

ALTER TABLE {{db}}.holder_counts_hourly {{on_cluster}} COMMENT COLUMN IF EXISTS vault 'Vault slug';
ALTER TABLE {{db}}.holder_counts_hourly {{on_cluster}} COMMENT COLUMN IF EXISTS chain_id 'Chain id; 101 for Solana';
ALTER TABLE {{db}}.holder_counts_hourly {{on_cluster}} COMMENT COLUMN IF EXISTS hour 'Start of the UTC hour; the count is taken at its end';
ALTER TABLE {{db}}.holder_counts_hourly {{on_cluster}} COMMENT COLUMN IF EXISTS holders 'Addresses with a positive balance at the end of the hour';

ALTER TABLE {{db}}.holder_history_daily {{on_cluster}} COMMENT COLUMN IF EXISTS vault 'Vault slug';
ALTER TABLE {{db}}.holder_history_daily {{on_cluster}} COMMENT COLUMN IF EXISTS chain_id 'Chain id; 101 for Solana';
ALTER TABLE {{db}}.holder_history_daily {{on_cluster}} COMMENT COLUMN IF EXISTS day 'UTC day';
ALTER TABLE {{db}}.holder_history_daily {{on_cluster}} COMMENT COLUMN IF EXISTS start 'Holder count at 00:00, addresses';
ALTER TABLE {{db}}.holder_history_daily {{on_cluster}} COMMENT COLUMN IF EXISTS end 'Holder count at the end of the last ended hour of the day, addresses';
ALTER TABLE {{db}}.holder_history_daily {{on_cluster}} COMMENT COLUMN IF EXISTS min 'Lowest hourly sample (hours before the first transfer count as 0), addresses';
ALTER TABLE {{db}}.holder_history_daily {{on_cluster}} COMMENT COLUMN IF EXISTS max 'Highest hourly sample, addresses';
ALTER TABLE {{db}}.holder_history_daily {{on_cluster}} COMMENT COLUMN IF EXISTS average 'Mean of the hourly samples, addresses';
ALTER TABLE {{db}}.holder_history_daily {{on_cluster}} COMMENT COLUMN IF EXISTS count 'Number of hourly samples (24 for a past day)';

ALTER TABLE {{db}}.mint_state {{on_cluster}} COMMENT COLUMN IF EXISTS signature 'Solana signature that started the flow';
ALTER TABLE {{db}}.mint_state {{on_cluster}} COMMENT COLUMN IF EXISTS step 'Step name: solana, cctpAttestation, predicate, relay, composer, oft, solanaMint, reclaim';
ALTER TABLE {{db}}.mint_state {{on_cluster}} COMMENT COLUMN IF EXISTS status 'Latest status: pending, in_progress, completed, failed, skipped';
ALTER TABLE {{db}}.mint_state {{on_cluster}} COMMENT COLUMN IF EXISTS fields 'Latest fields of the step, as strings';
ALTER TABLE {{db}}.mint_state {{on_cluster}} COMMENT COLUMN IF EXISTS error 'Latest error message, empty when none';
ALTER TABLE {{db}}.mint_state {{on_cluster}} COMMENT COLUMN IF EXISTS first_seen 'First observation of the step, UTC (ms)';
ALTER TABLE {{db}}.mint_state {{on_cluster}} COMMENT COLUMN IF EXISTS last_seen 'Latest observation of the step, UTC (ms)';

ALTER TABLE {{db}}.price_daily {{on_cluster}} COMMENT COLUMN IF EXISTS vault 'Vault slug';
ALTER TABLE {{db}}.price_daily {{on_cluster}} COMMENT COLUMN IF EXISTS chain_id 'Chain id of the accountant';
ALTER TABLE {{db}}.price_daily {{on_cluster}} COMMENT COLUMN IF EXISTS day 'UTC day (from the first rate on the chain to today)';
ALTER TABLE {{db}}.price_daily {{on_cluster}} COMMENT COLUMN IF EXISTS close_rate 'Last rate at or before the end of the day (carried forward), base-asset raw units';
ALTER TABLE {{db}}.price_daily {{on_cluster}} COMMENT COLUMN IF EXISTS rate_decimals 'Decimals of close_rate';
ALTER TABLE {{db}}.price_daily {{on_cluster}} COMMENT COLUMN IF EXISTS price_float 'close_rate / 10^rate_decimals: share price in the base asset (convenience; exact: price_close_daily.price_e18)';
ALTER TABLE {{db}}.price_daily {{on_cluster}} COMMENT COLUMN IF EXISTS is_paused '1 when the accountant reported paused with the close';
ALTER TABLE {{db}}.price_daily {{on_cluster}} COMMENT COLUMN IF EXISTS rate_updated_at 'Block time of the latest rate on or before the day, UTC';

ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN IF EXISTS event_id 'Natural identity chainId:blockHash:logIndex';
ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN IF EXISTS chain_id 'Chain id';
ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN IF EXISTS block_number 'Block number';
ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN IF EXISTS block_hash 'Block hash';
ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN IF EXISTS block_time 'Block timestamp';
ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN IF EXISTS tx_hash 'Transaction hash (reads: empty-tx marker)';
ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN IF EXISTS log_index 'Log index';
ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN IF EXISTS vault 'Vault slug';
ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN IF EXISTS accountant 'Accountant address';
ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN IF EXISTS rate 'Share price in base-asset raw units';
ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN IF EXISTS rate_decimals 'Decimals of rate';
ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN IF EXISTS source 'EVENT (ExchangeRateUpdated) or READ (getRate snapshot)';
ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN IF EXISTS is_paused '1 when the accountant is paused after this update';
ALTER TABLE {{db}}.rates {{on_cluster}} COMMENT COLUMN IF EXISTS ingested_at 'When the consumer stored the row';

ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN IF EXISTS vault 'Vault slug';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN IF EXISTS chain_id 'Chain of the queue';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN IF EXISTS queue 'Queue contract address';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN IF EXISTS request_id 'Request id within the queue';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN IF EXISTS amount 'Shares of the latest REQUEST update, raw units';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN IF EXISTS min_price 'Limit price of the latest update, want-token raw units';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN IF EXISTS deadline 'Deadline of the latest update, UTC';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN IF EXISTS requested_at 'Block time of the latest REQUEST update, UTC';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN IF EXISTS request_tx_hash 'Transaction of the latest REQUEST update';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN IF EXISTS user 'Requesting account';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN IF EXISTS offer_token 'Share token offered';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN IF EXISTS want_token 'Token wanted';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN IF EXISTS want_decimals 'Decimals of the want token';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN IF EXISTS last_request_pos '(block_number, log_index) of the latest REQUEST';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN IF EXISTS last_fill_pos '(block_number, log_index) of the latest FILL ((0, 0) when none)';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN IF EXISTS last_cancel_pos '(block_number, log_index) of the latest CANCEL ((0, 0) when none)';
ALTER TABLE {{db}}.redemption_requests {{on_cluster}} COMMENT COLUMN IF EXISTS state 'open, filled, cancelled or expired (deadline passed unfilled, by the server clock)';

ALTER TABLE {{db}}.role_assignments {{on_cluster}} COMMENT COLUMN IF EXISTS vault 'Vault slug';
ALTER TABLE {{db}}.role_assignments {{on_cluster}} COMMENT COLUMN IF EXISTS chain_id 'Chain id';
ALTER TABLE {{db}}.role_assignments {{on_cluster}} COMMENT COLUMN IF EXISTS authority 'Authority contract address';
ALTER TABLE {{db}}.role_assignments {{on_cluster}} COMMENT COLUMN IF EXISTS user 'Account';
ALTER TABLE {{db}}.role_assignments {{on_cluster}} COMMENT COLUMN IF EXISTS role 'Role id (names: the vault role map in config)';
ALTER TABLE {{db}}.role_assignments {{on_cluster}} COMMENT COLUMN IF EXISTS enabled '1 when the role is currently granted';
ALTER TABLE {{db}}.role_assignments {{on_cluster}} COMMENT COLUMN IF EXISTS updated_at 'Block time of the latest update, UTC';

ALTER TABLE {{db}}.role_updates {{on_cluster}} COMMENT COLUMN IF EXISTS event_id 'Natural identity chainId:blockHash:logIndex';
ALTER TABLE {{db}}.role_updates {{on_cluster}} COMMENT COLUMN IF EXISTS chain_id 'Chain id';
ALTER TABLE {{db}}.role_updates {{on_cluster}} COMMENT COLUMN IF EXISTS block_number 'Block number';
ALTER TABLE {{db}}.role_updates {{on_cluster}} COMMENT COLUMN IF EXISTS block_hash 'Block hash';
ALTER TABLE {{db}}.role_updates {{on_cluster}} COMMENT COLUMN IF EXISTS block_time 'Block timestamp';
ALTER TABLE {{db}}.role_updates {{on_cluster}} COMMENT COLUMN IF EXISTS tx_hash 'Transaction hash';
ALTER TABLE {{db}}.role_updates {{on_cluster}} COMMENT COLUMN IF EXISTS log_index 'Log index';
ALTER TABLE {{db}}.role_updates {{on_cluster}} COMMENT COLUMN IF EXISTS vault 'Vault slug';
ALTER TABLE {{db}}.role_updates {{on_cluster}} COMMENT COLUMN IF EXISTS authority 'RolesAuthority address';
ALTER TABLE {{db}}.role_updates {{on_cluster}} COMMENT COLUMN IF EXISTS user 'Account whose role changed';
ALTER TABLE {{db}}.role_updates {{on_cluster}} COMMENT COLUMN IF EXISTS role 'Role id';
ALTER TABLE {{db}}.role_updates {{on_cluster}} COMMENT COLUMN IF EXISTS enabled '1 = granted, 0 = revoked';
ALTER TABLE {{db}}.role_updates {{on_cluster}} COMMENT COLUMN IF EXISTS ingested_at 'When the consumer stored the row';

ALTER TABLE {{db}}.snapshots_latest {{on_cluster}} COMMENT COLUMN IF EXISTS vault 'Vault slug';
ALTER TABLE {{db}}.snapshots_latest {{on_cluster}} COMMENT COLUMN IF EXISTS kind 'SUPPLY, ASSET_BALANCE, ASSET_PRICE, COMPOSITION or ACCOUNTANT';
ALTER TABLE {{db}}.snapshots_latest {{on_cluster}} COMMENT COLUMN IF EXISTS chain_id 'Chain read (0 when not chain-specific)';
ALTER TABLE {{db}}.snapshots_latest {{on_cluster}} COMMENT COLUMN IF EXISTS token 'Token address, or the targetComposition slug for COMPOSITION';
ALTER TABLE {{db}}.snapshots_latest {{on_cluster}} COMMENT COLUMN IF EXISTS ts 'Time of the latest read, UTC';
ALTER TABLE {{db}}.snapshots_latest {{on_cluster}} COMMENT COLUMN IF EXISTS amount 'Supply or balance, raw units';
ALTER TABLE {{db}}.snapshots_latest {{on_cluster}} COMMENT COLUMN IF EXISTS decimals 'Decimals of amount';
ALTER TABLE {{db}}.snapshots_latest {{on_cluster}} COMMENT COLUMN IF EXISTS usd_price 'USD price (null when not read)';
ALTER TABLE {{db}}.snapshots_latest {{on_cluster}} COMMENT COLUMN IF EXISTS apy7d 'Asset 7-day APY, percent';
ALTER TABLE {{db}}.snapshots_latest {{on_cluster}} COMMENT COLUMN IF EXISTS apy30d 'Asset 30-day APY, percent';
ALTER TABLE {{db}}.snapshots_latest {{on_cluster}} COMMENT COLUMN IF EXISTS weight 'Composition weight, percent';
ALTER TABLE {{db}}.snapshots_latest {{on_cluster}} COMMENT COLUMN IF EXISTS is_paused 'Accountant paused (ACCOUNTANT snapshots)';

ALTER TABLE {{db}}.source_errors {{on_cluster}} COMMENT COLUMN IF EXISTS vault 'Vault slug';
ALTER TABLE {{db}}.source_errors {{on_cluster}} COMMENT COLUMN IF EXISTS chain_id 'Chain id, 0 when not chain-specific';
ALTER TABLE {{db}}.source_errors {{on_cluster}} COMMENT COLUMN IF EXISTS source 'Data source (e.g. rpc:98866, attestation)';
ALTER TABLE {{db}}.source_errors {{on_cluster}} COMMENT COLUMN IF EXISTS operation 'Operation that failed';
ALTER TABLE {{db}}.source_errors {{on_cluster}} COMMENT COLUMN IF EXISTS message 'Error message';
ALTER TABLE {{db}}.source_errors {{on_cluster}} COMMENT COLUMN IF EXISTS code 'Error code (e.g. TIMEOUT)';
ALTER TABLE {{db}}.source_errors {{on_cluster}} COMMENT COLUMN IF EXISTS ts 'When it failed';

ALTER TABLE {{db}}.supply_daily {{on_cluster}} COMMENT COLUMN IF EXISTS vault 'Vault slug';
ALTER TABLE {{db}}.supply_daily {{on_cluster}} COMMENT COLUMN IF EXISTS chain_id 'Chain id; 101 for Solana';
ALTER TABLE {{db}}.supply_daily {{on_cluster}} COMMENT COLUMN IF EXISTS day 'UTC day (from the first mint or burn on the chain to today)';
ALTER TABLE {{db}}.supply_daily {{on_cluster}} COMMENT COLUMN IF EXISTS supply_raw 'Share supply at the end of the day, raw units (mints minus burns)';

ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN IF EXISTS event_id 'Natural identity chainId:blockHash:logIndex';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN IF EXISTS chain_id 'Chain id';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN IF EXISTS block_number 'Block number';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN IF EXISTS block_hash 'Block hash';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN IF EXISTS block_time 'Block timestamp';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN IF EXISTS tx_hash 'Transaction hash';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN IF EXISTS log_index 'Log index in the block';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN IF EXISTS vault 'Vault slug';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN IF EXISTS kind 'DEPOSIT, WITHDRAW, REDEEM_REQUEST, INSTANT_REDEEM, BRIDGE_IN, BRIDGE_OUT';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN IF EXISTS user 'Account acting';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN IF EXISTS shares 'Shares, raw units';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN IF EXISTS shares_token 'Share token address';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN IF EXISTS assets 'Assets, raw units';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN IF EXISTS assets_token 'Asset token address';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN IF EXISTS assets_decimals 'Decimals of the asset token';
ALTER TABLE {{db}}.transactions {{on_cluster}} COMMENT COLUMN IF EXISTS ingested_at 'When the consumer stored the row';

ALTER TABLE {{db}}.transfers {{on_cluster}} COMMENT COLUMN IF EXISTS event_id 'Natural identity chainId:blockHash:logIndex';
ALTER TABLE {{db}}.transfers {{on_cluster}} COMMENT COLUMN IF EXISTS chain_id 'EVM chain id; 101 for Solana';
ALTER TABLE {{db}}.transfers {{on_cluster}} COMMENT COLUMN IF EXISTS block_number 'Block number (Solana: slot)';
ALTER TABLE {{db}}.transfers {{on_cluster}} COMMENT COLUMN IF EXISTS block_hash 'Block hash';
ALTER TABLE {{db}}.transfers {{on_cluster}} COMMENT COLUMN IF EXISTS block_time 'Block timestamp';
ALTER TABLE {{db}}.transfers {{on_cluster}} COMMENT COLUMN IF EXISTS tx_hash 'Transaction hash (Solana: signature)';
ALTER TABLE {{db}}.transfers {{on_cluster}} COMMENT COLUMN IF EXISTS log_index 'Log index in the block';
ALTER TABLE {{db}}.transfers {{on_cluster}} COMMENT COLUMN IF EXISTS vault 'Vault slug';
ALTER TABLE {{db}}.transfers {{on_cluster}} COMMENT COLUMN IF EXISTS token 'Share token address (EVM) or mint (Solana)';
ALTER TABLE {{db}}.transfers {{on_cluster}} COMMENT COLUMN IF EXISTS from_address 'Sender; zero address on mint';
ALTER TABLE {{db}}.transfers {{on_cluster}} COMMENT COLUMN IF EXISTS to_address 'Receiver; zero address on burn';
ALTER TABLE {{db}}.transfers {{on_cluster}} COMMENT COLUMN IF EXISTS amount 'Shares moved, raw token units';
ALTER TABLE {{db}}.transfers {{on_cluster}} COMMENT COLUMN IF EXISTS ingested_at 'When the consumer stored the row';

ALTER TABLE {{db}}.vault_daily {{on_cluster}} COMMENT COLUMN IF EXISTS vault 'Vault slug';
ALTER TABLE {{db}}.vault_daily {{on_cluster}} COMMENT COLUMN IF EXISTS chain_id 'Chain id; 101 for Solana';
ALTER TABLE {{db}}.vault_daily {{on_cluster}} COMMENT COLUMN IF EXISTS day 'UTC day';
ALTER TABLE {{db}}.vault_daily {{on_cluster}} COMMENT COLUMN IF EXISTS supply_raw 'Share supply on the chain at the end of the day, raw units';
ALTER TABLE {{db}}.vault_daily {{on_cluster}} COMMENT COLUMN IF EXISTS decimals 'Share decimals on the chain (decimalsOverride applied)';
ALTER TABLE {{db}}.vault_daily {{on_cluster}} COMMENT COLUMN IF EXISTS close_rate 'Close rate used for the chain: its own close, else the vault price chain close; base-asset raw units';
ALTER TABLE {{db}}.vault_daily {{on_cluster}} COMMENT COLUMN IF EXISTS rate_decimals 'Decimals of close_rate';
ALTER TABLE {{db}}.vault_daily {{on_cluster}} COMMENT COLUMN IF EXISTS price_float 'Share price used for the chain, base asset per share';
ALTER TABLE {{db}}.vault_daily {{on_cluster}} COMMENT COLUMN IF EXISTS base_asset_usd_price 'Configured USD price of the base asset';
ALTER TABLE {{db}}.vault_daily {{on_cluster}} COMMENT COLUMN IF EXISTS tvl_usd_float 'TVL of the chain at its own price, USD (equals tvl_chain_daily.tvl_usd)';

ALTER TABLE {{db}}.vault_holders {{on_cluster}} COMMENT COLUMN IF EXISTS vault 'Vault slug';
ALTER TABLE {{db}}.vault_holders {{on_cluster}} COMMENT COLUMN IF EXISTS holders 'Distinct addresses with a positive balance on any chain (numHolders)';
ALTER TABLE {{db}}.vault_holders {{on_cluster}} COMMENT COLUMN IF EXISTS holder_positions '(chain, address) pairs with a positive balance';

ALTER TABLE {{db}}.vault_registry {{on_cluster}} COMMENT COLUMN IF EXISTS slug 'Vault slug, the registry key';
ALTER TABLE {{db}}.vault_registry {{on_cluster}} COMMENT COLUMN IF EXISTS status 'CMS status: active, disabled, coming_soon, hidden';
ALTER TABLE {{db}}.vault_registry {{on_cluster}} COMMENT COLUMN IF EXISTS updated_at 'Version of the entry; the newest wins';
ALTER TABLE {{db}}.vault_registry {{on_cluster}} COMMENT COLUMN IF EXISTS vault_address 'Share token / vault address (lower-case)';
ALTER TABLE {{db}}.vault_registry {{on_cluster}} COMMENT COLUMN IF EXISTS name 'Display name';
ALTER TABLE {{db}}.vault_registry {{on_cluster}} COMMENT COLUMN IF EXISTS symbol 'Share token symbol';
ALTER TABLE {{db}}.vault_registry {{on_cluster}} COMMENT COLUMN IF EXISTS decimals 'Share token decimals';
ALTER TABLE {{db}}.vault_registry {{on_cluster}} COMMENT COLUMN IF EXISTS chain_ids 'EVM chain ids the share token lives on';
ALTER TABLE {{db}}.vault_registry {{on_cluster}} COMMENT COLUMN IF EXISTS solana_mint 'Solana mint of the share token, empty when none';
ALTER TABLE {{db}}.vault_registry {{on_cluster}} COMMENT COLUMN IF EXISTS base_asset_usd_price 'Configured USD price of the base asset (fallback when no price snapshot)';
ALTER TABLE {{db}}.vault_registry {{on_cluster}} COMMENT COLUMN IF EXISTS base_asset_decimals 'Decimals of the base asset (the accountant rate unit)';
ALTER TABLE {{db}}.vault_registry {{on_cluster}} COMMENT COLUMN IF EXISTS info 'Full registry entry (static VaultInfo fields) as JSON';

-- Solana mint flows, one row per signature, with the overall status of DESIGN section 8
-- (api/read/mint-status.ts: refunded once the reclaim completed, failed on any failed step,
-- completed when every applicable step is, pending when none started, else processing).
CREATE VIEW IF NOT EXISTS {{db}}.mint_flows {{on_cluster}} (
  signature String COMMENT 'Solana signature that started the flow',
  step_statuses Map(String, String) COMMENT 'Status of each of the eight steps (pending when not observed yet)',
  overall_status String COMMENT 'pending, processing, completed, failed or refunded',
  completed_steps UInt64 COMMENT 'Applicable steps completed',
  applicable_steps UInt64 COMMENT 'Steps that apply: not skipped; the reclaim only once a refund is under way',
  progress String COMMENT 'completed_steps/applicable_steps, e.g. 5/7',
  created_at DateTime64(3, 'UTC') COMMENT 'First observation of any step, UTC',
  updated_at DateTime64(3, 'UTC') COMMENT 'Latest observation of any step, UTC'
) AS
SELECT signature, mapFromArrays(names, statuses) AS step_statuses,
  multiIf(statuses[8] = 'completed', 'refunded', has(statuses, 'failed'), 'failed',
    arrayAll((s, n) -> s = 'completed' OR s = 'skipped' OR (n = 'reclaim' AND s = 'pending'), statuses, names), 'completed',
    arrayAll(s -> s = 'pending', statuses), 'pending', 'processing') AS overall_status,
  toUInt64(arrayCount((s, n) -> s = 'completed', statuses, names)) AS completed_steps,
  toUInt64(arrayCount((s, n) -> s != 'skipped' AND NOT (n = 'reclaim' AND s = 'pending'), statuses, names)) AS applicable_steps,
  concat(toString(completed_steps), '/', toString(applicable_steps)) AS progress,
  created_at, updated_at
FROM (
  SELECT signature,
    ['solana', 'cctpAttestation', 'predicate', 'relay', 'composer', 'oft', 'solanaMint', 'reclaim'] AS names,
    mapFromArrays(groupArray(toString(step)), groupArray(status)) AS seen,
    arrayMap(n -> if(has(['pending', 'in_progress', 'completed', 'failed', 'skipped'], seen[n]), seen[n], 'pending'), names) AS statuses,
    min(first_seen) AS created_at, max(last_seen) AS updated_at
  FROM {{db}}.mint_state GROUP BY signature
)
COMMENT 'One row per Solana mint flow: step statuses, overall status and progress as /solana/mint-status reports them';
