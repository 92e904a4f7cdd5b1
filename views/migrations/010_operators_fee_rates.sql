-- Operator approvals (ERC-7540 OperatorSet) and fee-rate settings (issue 14 item 4): raw tables keyed
-- by the event's natural identity like the other *_raw tables of 001 (a reorg retraction is a row with
-- removed = 1, hidden by FINAL). Their plain views: views/plain/vault_operators.sql, fee_rate_history.sql.

CREATE TABLE IF NOT EXISTS {{db}}.operators_raw {{on_cluster}} (
  event_id String COMMENT 'Natural identity chainId:blockHash:logIndex',
  chain_id UInt32 COMMENT 'Chain id',
  block_number UInt64 COMMENT 'Block number',
  block_hash String COMMENT 'Block hash',
  block_time DateTime('UTC') COMMENT 'Block timestamp',
  tx_hash String COMMENT 'Transaction hash',
  log_index UInt32 COMMENT 'Log index',
  removed UInt8 COMMENT '1 = retraction (reorg)',
  ver UInt64 COMMENT 'Insert sequence',
  vault LowCardinality(String) COMMENT 'Vault slug (a REGISTRY event is stored once for every vault of the chain)',
  contract String COMMENT 'Emitter: the OperatorRegistry or the NestVault',
  source LowCardinality(String) COMMENT 'REGISTRY (chain-wide OperatorRegistry, counts for every vault of the chain) or VAULT (NestVault-local operator)',
  controller String COMMENT 'Account that approved or revoked the operator',
  operator String COMMENT 'Operator address',
  approved UInt8 COMMENT '1 = approved, 0 = revoked',
  ingested_at DateTime64(3, 'UTC') DEFAULT now64(3) COMMENT 'When the consumer stored the row'
) ENGINE = ReplacingMergeTree(ver, removed)
ORDER BY (vault, chain_id, block_number, event_id)
SETTINGS non_replicated_deduplication_window = 1000
COMMENT 'ERC-7540 OperatorSet(controller, operator, approved) events of the OperatorRegistry and the NestVaults';

CREATE TABLE IF NOT EXISTS {{db}}.fee_rates_raw {{on_cluster}} (
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
  contract String COMMENT 'Emitter: the accountant or the NestVault',
  event LowCardinality(String) COMMENT 'Canonical signature of the source event, e.g. ManagementFeeUpdated(uint16,uint16) or SetFee(uint8,(uint32,uint256),(uint32,uint256))',
  kind LowCardinality(String) COMMENT 'Fee the setting prices: MANAGEMENT, PLATFORM, PERFORMANCE (accountants), INSTANT_REDEMPTION, DEPOSIT, REDEMPTION (NestVault)',
  old_rate UInt32 COMMENT 'Rate before the change, units of 1/rate_scale',
  new_rate UInt32 COMMENT 'Rate after the change, units of 1/rate_scale',
  rate_scale UInt32 COMMENT 'Rate denominator: 10000 (bps, legacy accountants) or 1000000 (Nest accountants, NestVault)',
  old_flat UInt256 COMMENT 'NestVault flat fee before the change, raw asset units (0 for accountants)',
  new_flat UInt256 COMMENT 'NestVault flat fee after the change, raw asset units (0 for accountants)',
  ingested_at DateTime64(3, 'UTC') DEFAULT now64(3) COMMENT 'When the consumer stored the row'
) ENGINE = ReplacingMergeTree(ver, removed)
ORDER BY (vault, chain_id, block_number, event_id)
SETTINGS non_replicated_deduplication_window = 1000
COMMENT 'Fee-rate setting changes: accountant PlatformFeeUpdated, PerformanceFeeUpdated, ManagementFeeUpdated (uint16 bps, uint32 1e6) and NestVault SetFee';
