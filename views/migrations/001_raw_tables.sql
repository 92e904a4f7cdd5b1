-- Raw tables: events as received from the bus, one table per event family.
-- Chain events are keyed by their natural identity (event_id = chainId:blockHash:logIndex).
-- `ver` is the consumer's insert sequence and `removed` the reorg retraction flag:
-- ReplacingMergeTree(ver, removed) keeps the newest state of each event and FINAL hides
-- retracted ones. Read the views of 002 and 003 rather than these tables.

CREATE TABLE IF NOT EXISTS {{db}}.registry_raw {{on_cluster}} (
  slug LowCardinality(String) COMMENT 'Vault slug, the registry key',
  status LowCardinality(String) COMMENT 'CMS status: active, disabled, coming_soon, hidden',
  updated_at DateTime64(3, 'UTC') COMMENT 'Version of the entry; the newest wins',
  vault_address String COMMENT 'Share token / vault address (lower-case)',
  name String COMMENT 'Display name',
  symbol String COMMENT 'Share token symbol',
  decimals UInt8 COMMENT 'Share token decimals',
  chain_ids Array(UInt32) COMMENT 'EVM chain ids the share token lives on',
  solana_mint String COMMENT 'Solana mint of the share token, empty when none',
  base_asset_usd_price Decimal(38, 18) COMMENT 'Configured USD price of the base asset (fallback when no price snapshot)',
  base_asset_decimals UInt8 COMMENT 'Decimals of the base asset (the accountant rate unit)',
  info String COMMENT 'Full registry entry (static VaultInfo fields) as JSON',
  ingested_at DateTime64(3, 'UTC') DEFAULT now64(3) COMMENT 'When the consumer stored the row'
) ENGINE = ReplacingMergeTree(updated_at)
ORDER BY slug
SETTINGS non_replicated_deduplication_window = 1000
COMMENT 'Vault registry entries as published (one row per version)';

CREATE TABLE IF NOT EXISTS {{db}}.blocks_raw {{on_cluster}} (
  chain_id UInt32 COMMENT 'EVM chain id; 101 for Solana',
  block_number UInt64 COMMENT 'Block number (Solana: slot)',
  block_hash String COMMENT 'Block hash',
  parent_hash String COMMENT 'Parent block hash',
  block_time DateTime('UTC') COMMENT 'Block timestamp',
  removed UInt8 COMMENT '1 when a reorg retracted this block',
  ver UInt64 COMMENT 'Insert sequence; the newest state of a block wins',
  ingested_at DateTime64(3, 'UTC') DEFAULT now64(3) COMMENT 'When the consumer stored the row'
) ENGINE = ReplacingMergeTree(ver, removed)
ORDER BY (chain_id, block_number, block_hash)
SETTINGS non_replicated_deduplication_window = 1000
COMMENT 'Chain block headers seen by the ingesters (watermarks and reorg audit)';

CREATE TABLE IF NOT EXISTS {{db}}.transfers_raw {{on_cluster}} (
  event_id String COMMENT 'Natural identity chainId:blockHash:logIndex',
  chain_id UInt32 COMMENT 'EVM chain id; 101 for Solana',
  block_number UInt64 COMMENT 'Block number (Solana: slot)',
  block_hash String COMMENT 'Block hash',
  block_time DateTime('UTC') COMMENT 'Block timestamp',
  tx_hash String COMMENT 'Transaction hash (Solana: signature)',
  log_index UInt32 COMMENT 'Log index in the block',
  removed UInt8 COMMENT '1 = this row retracts the event (reorg)',
  ver UInt64 COMMENT 'Insert sequence; the newest state of an event wins',
  vault LowCardinality(String) COMMENT 'Vault slug',
  token String COMMENT 'Share token address (EVM) or mint (Solana)',
  from_address String COMMENT 'Sender; zero address on mint',
  to_address String COMMENT 'Receiver; zero address on burn',
  amount UInt256 COMMENT 'Shares moved, raw token units',
  ingested_at DateTime64(3, 'UTC') DEFAULT now64(3) COMMENT 'When the consumer stored the row',
  INDEX idx_block_time block_time TYPE minmax GRANULARITY 1
) ENGINE = ReplacingMergeTree(ver, removed)
ORDER BY (vault, chain_id, block_number, event_id)
SETTINGS non_replicated_deduplication_window = 1000
COMMENT 'Share-token transfers (EVM Transfer logs, Solana balance changes) and their retractions';

CREATE TABLE IF NOT EXISTS {{db}}.activity_raw {{on_cluster}} (
  event_id String COMMENT 'Natural identity chainId:blockHash:logIndex',
  chain_id UInt32 COMMENT 'Chain id',
  block_number UInt64 COMMENT 'Block number',
  block_hash String COMMENT 'Block hash',
  block_time DateTime('UTC') COMMENT 'Block timestamp',
  tx_hash String COMMENT 'Transaction hash',
  log_index UInt32 COMMENT 'Log index in the block',
  removed UInt8 COMMENT '1 = retraction (reorg)',
  ver UInt64 COMMENT 'Insert sequence; the newest state of an event wins',
  vault LowCardinality(String) COMMENT 'Vault slug',
  kind LowCardinality(String) COMMENT 'DEPOSIT, WITHDRAW, REDEEM_REQUEST, INSTANT_REDEEM, BRIDGE_IN, BRIDGE_OUT',
  user String COMMENT 'Account acting',
  shares UInt256 COMMENT 'Shares, raw units',
  shares_token String COMMENT 'Share token address',
  assets UInt256 COMMENT 'Assets, raw units',
  assets_token String COMMENT 'Asset token address',
  assets_decimals UInt8 COMMENT 'Decimals of the asset token',
  ingested_at DateTime64(3, 'UTC') DEFAULT now64(3) COMMENT 'When the consumer stored the row'
) ENGINE = ReplacingMergeTree(ver, removed)
ORDER BY (vault, chain_id, block_number, event_id)
SETTINGS non_replicated_deduplication_window = 1000
COMMENT 'Deposits, withdrawals, redeem requests, instant redemptions and bridge moves';

CREATE TABLE IF NOT EXISTS {{db}}.rates_raw {{on_cluster}} (
  event_id String COMMENT 'Natural identity chainId:blockHash:logIndex',
  chain_id UInt32 COMMENT 'Chain id',
  block_number UInt64 COMMENT 'Block number',
  block_hash String COMMENT 'Block hash',
  block_time DateTime('UTC') COMMENT 'Block timestamp',
  tx_hash String COMMENT 'Transaction hash (reads: empty-tx marker)',
  log_index UInt32 COMMENT 'Log index',
  removed UInt8 COMMENT '1 = retraction (reorg)',
  ver UInt64 COMMENT 'Insert sequence',
  vault LowCardinality(String) COMMENT 'Vault slug',
  accountant String COMMENT 'Accountant address',
  rate UInt256 COMMENT 'Share price in base-asset raw units',
  rate_decimals UInt8 COMMENT 'Decimals of rate',
  source LowCardinality(String) COMMENT 'EVENT (ExchangeRateUpdated) or READ (getRate snapshot)',
  is_paused UInt8 COMMENT '1 when the accountant is paused after this update',
  ingested_at DateTime64(3, 'UTC') DEFAULT now64(3) COMMENT 'When the consumer stored the row'
) ENGINE = ReplacingMergeTree(ver, removed)
ORDER BY (vault, chain_id, block_number, event_id)
SETTINGS non_replicated_deduplication_window = 1000
COMMENT 'Accountant exchange-rate updates and reads';

CREATE TABLE IF NOT EXISTS {{db}}.fees_raw {{on_cluster}} (
  event_id String COMMENT 'Natural identity chainId:blockHash:logIndex',
  chain_id UInt32 COMMENT 'Chain id',
  block_number UInt64 COMMENT 'Block number',
  block_hash String COMMENT 'Block hash',
  block_time DateTime('UTC') COMMENT 'Block timestamp',
  tx_hash String COMMENT 'Transaction hash',
  log_index UInt32 COMMENT 'Log index',
  removed UInt8 COMMENT '1 = retraction (reorg)',
  ver UInt64 COMMENT 'Insert sequence',
  vault LowCardinality(String) COMMENT 'Vault slug',
  kind LowCardinality(String) COMMENT 'MANAGEMENT, PERFORMANCE, INSTANT_REDEMPTION, DEPOSIT, REDEMPTION, CLAIMED',
  token String COMMENT 'Fee token',
  amount UInt256 COMMENT 'Fee amount, raw units',
  decimals UInt8 COMMENT 'Fee token decimals',
  usd_price Decimal(38, 18) COMMENT 'USD price of the fee token at the event',
  usd_e18 Int256 COMMENT 'Exact USD value in units of 1e-18 USD (amount * price / 10^decimals)',
  ingested_at DateTime64(3, 'UTC') DEFAULT now64(3) COMMENT 'When the consumer stored the row'
) ENGINE = ReplacingMergeTree(ver, removed)
ORDER BY (vault, chain_id, block_number, event_id)
SETTINGS non_replicated_deduplication_window = 1000
COMMENT 'Fee accruals and claims';

CREATE TABLE IF NOT EXISTS {{db}}.redemptions_raw {{on_cluster}} (
  event_id String COMMENT 'Natural identity chainId:blockHash:logIndex',
  chain_id UInt32 COMMENT 'Chain id',
  block_number UInt64 COMMENT 'Block number',
  block_hash String COMMENT 'Block hash',
  block_time DateTime('UTC') COMMENT 'Block timestamp',
  tx_hash String COMMENT 'Transaction hash',
  log_index UInt32 COMMENT 'Log index',
  removed UInt8 COMMENT '1 = retraction (reorg)',
  ver UInt64 COMMENT 'Insert sequence',
  vault LowCardinality(String) COMMENT 'Vault slug',
  queue String COMMENT 'Queue contract address',
  kind LowCardinality(String) COMMENT 'REQUEST (new or updated), FILL, CANCEL',
  request_id String COMMENT 'Request identity within the queue',
  user String COMMENT 'Requesting user',
  offer_token String COMMENT 'Token offered (the share)',
  want_token String COMMENT 'Token wanted',
  amount UInt256 COMMENT 'Shares (REQUEST: new amount; FILL: filled)',
  min_price UInt256 COMMENT 'Limit price in want-token raw units',
  want_decimals UInt8 COMMENT 'Want token decimals',
  deadline DateTime('UTC') COMMENT 'Request deadline',
  ingested_at DateTime64(3, 'UTC') DEFAULT now64(3) COMMENT 'When the consumer stored the row'
) ENGINE = ReplacingMergeTree(ver, removed)
ORDER BY (vault, chain_id, block_number, event_id)
SETTINGS non_replicated_deduplication_window = 1000
COMMENT 'Redemption-queue requests, fills and cancellations';

CREATE TABLE IF NOT EXISTS {{db}}.roles_raw {{on_cluster}} (
  event_id String COMMENT 'Natural identity chainId:blockHash:logIndex',
  chain_id UInt32 COMMENT 'Chain id',
  block_number UInt64 COMMENT 'Block number',
  block_hash String COMMENT 'Block hash',
  block_time DateTime('UTC') COMMENT 'Block timestamp',
  tx_hash String COMMENT 'Transaction hash',
  log_index UInt32 COMMENT 'Log index',
  removed UInt8 COMMENT '1 = retraction (reorg)',
  ver UInt64 COMMENT 'Insert sequence',
  vault LowCardinality(String) COMMENT 'Vault slug',
  authority String COMMENT 'RolesAuthority address',
  user String COMMENT 'Account whose role changed',
  role UInt8 COMMENT 'Role id',
  enabled UInt8 COMMENT '1 = granted, 0 = revoked',
  ingested_at DateTime64(3, 'UTC') DEFAULT now64(3) COMMENT 'When the consumer stored the row'
) ENGINE = ReplacingMergeTree(ver, removed)
ORDER BY (vault, chain_id, block_number, event_id)
SETTINGS non_replicated_deduplication_window = 1000
COMMENT 'RolesAuthority UserRoleUpdated events';

CREATE TABLE IF NOT EXISTS {{db}}.snapshots_raw {{on_cluster}} (
  vault LowCardinality(String) COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain read (0 when not chain-specific)',
  block_number UInt64 COMMENT 'Block the read was made at',
  ts DateTime('UTC') COMMENT 'Read time',
  kind LowCardinality(String) COMMENT 'SUPPLY, ASSET_BALANCE, ASSET_PRICE, COMPOSITION, ACCOUNTANT',
  token String COMMENT 'Token or asset the value is about',
  amount UInt256 COMMENT 'Supply or balance, raw units',
  decimals UInt8 COMMENT 'Decimals of amount',
  usd_price Nullable(Decimal(38, 18)) COMMENT 'USD price',
  apy7d Nullable(Decimal(38, 18)) COMMENT 'Asset 7-day APY, percent',
  apy30d Nullable(Decimal(38, 18)) COMMENT 'Asset 30-day APY, percent',
  weight Nullable(Decimal(38, 18)) COMMENT 'Composition weight, percent',
  is_paused UInt8 COMMENT 'Accountant paused (ACCOUNTANT snapshots)',
  ingested_at DateTime64(3, 'UTC') DEFAULT now64(3) COMMENT 'When the consumer stored the row'
) ENGINE = ReplacingMergeTree(ingested_at)
ORDER BY (vault, kind, chain_id, token, ts)
SETTINGS non_replicated_deduplication_window = 1000
COMMENT 'Periodic state reads: supply per chain, liquid-asset balances, prices, composition, accountant state';

CREATE TABLE IF NOT EXISTS {{db}}.mint_steps_raw {{on_cluster}} (
  signature String COMMENT 'Solana signature that started the flow',
  step LowCardinality(String) COMMENT 'solana, cctpAttestation, predicate, relay, composer, oft, solanaMint, reclaim',
  status LowCardinality(String) COMMENT 'pending, in_progress, completed, failed, skipped',
  observed_at DateTime64(3, 'UTC') COMMENT 'When the observation was made',
  fields Map(String, String) COMMENT 'Step fields as strings',
  error String COMMENT 'Error text of the observation, empty when none',
  ingested_at DateTime64(3, 'UTC') DEFAULT now64(3) COMMENT 'When the consumer stored the row'
) ENGINE = ReplacingMergeTree(ingested_at)
ORDER BY (signature, step, observed_at, status)
SETTINGS non_replicated_deduplication_window = 1000
COMMENT 'Observations of Solana mint-flow steps';

CREATE TABLE IF NOT EXISTS {{db}}.source_errors_raw {{on_cluster}} (
  vault LowCardinality(String) COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain id, 0 when not chain-specific',
  source String COMMENT 'Data source (e.g. rpc:98866, attestation)',
  operation String COMMENT 'Operation that failed',
  message String COMMENT 'Error message',
  code LowCardinality(String) COMMENT 'Error code (e.g. TIMEOUT)',
  ts DateTime('UTC') COMMENT 'When it failed',
  ingested_at DateTime64(3, 'UTC') DEFAULT now64(3) COMMENT 'When the consumer stored the row'
) ENGINE = ReplacingMergeTree(ingested_at)
ORDER BY (vault, ts, source, operation, chain_id, code)
SETTINGS non_replicated_deduplication_window = 1000
COMMENT 'Data-source failures (feed apy-history errors)';

CREATE TABLE IF NOT EXISTS {{db}}.dead_letters {{on_cluster}} (
  topic String COMMENT 'Topic the record came from',
  partition UInt32 COMMENT 'Partition',
  offset String COMMENT 'Offset in the partition',
  key String COMMENT 'Message key',
  reason String COMMENT 'Why it was rejected',
  payload String COMMENT 'Raw bytes (base64)',
  at DateTime64(3, 'UTC') COMMENT 'When it was rejected',
  ingested_at DateTime64(3, 'UTC') DEFAULT now64(3) COMMENT 'When the consumer stored the row'
) ENGINE = ReplacingMergeTree(ingested_at)
ORDER BY (topic, partition, offset)
SETTINGS non_replicated_deduplication_window = 1000
COMMENT 'Records rejected by the consumers or replay, with the reason';
