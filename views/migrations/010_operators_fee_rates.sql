-- Operator approvals (ERC-7540 OperatorSet) and fee-rate settings (issue 14 item 4): raw tables keyed
-- by the event's natural identity like the other *_raw tables of 001 (a reorg retraction is a row with
-- removed = 1, hidden by FINAL), and plain views of the current operators and of the fee-rate history.

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

CREATE VIEW IF NOT EXISTS {{db}}.vault_operators {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain id',
  controller String COMMENT 'Controller (the account whose requests the operator may act on)',
  operator String COMMENT 'Operator address',
  approved UInt8 COMMENT '1 when the operator may act for the controller on this vault and chain now: approved on the OperatorRegistry or on the NestVault (NestVault.isOperator is either)',
  via_registry UInt8 COMMENT '1 when the latest OperatorRegistry event of the pair approved it',
  via_vault UInt8 COMMENT '1 when the latest NestVault event of the pair approved it',
  updated_at DateTime('UTC') COMMENT 'Block time of the latest OperatorSet of the pair, UTC'
) AS
SELECT vault, chain_id, controller, operator, max(state) AS approved,
  maxIf(state, source = 'REGISTRY') AS via_registry, maxIf(state, source = 'VAULT') AS via_vault,
  max(changed_at) AS updated_at
FROM (
  SELECT toString(vault) AS vault, chain_id, toString(source) AS source, contract, controller, operator,
    argMax(approved, (block_number, log_index)) AS state, max(block_time) AS changed_at
  FROM {{db}}.operators_raw FINAL WHERE removed = 0
  GROUP BY vault, chain_id, source, contract, controller, operator
)
GROUP BY vault, chain_id, controller, operator
COMMENT 'Current operators per vault and chain: the latest OperatorSet state per (vault, chain, controller, operator), revoked pairs kept with approved = 0; auto-claim is on when the chain''s RedeemOperator is approved';

CREATE VIEW IF NOT EXISTS {{db}}.fee_rate_history {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain id',
  contract String COMMENT 'Accountant or NestVault that holds the setting',
  kind String COMMENT 'MANAGEMENT, PLATFORM, PERFORMANCE (accountants), INSTANT_REDEMPTION, DEPOSIT, REDEMPTION (NestVault)',
  event String COMMENT 'Canonical signature of the source event',
  valid_from DateTime('UTC') COMMENT 'Block time of the change, UTC: the setting applies from this block on',
  valid_to Nullable(DateTime('UTC')) COMMENT 'Block time of the next change of the same (contract, kind), UTC; NULL while current',
  block_number UInt64 COMMENT 'Block of the change',
  log_index UInt32 COMMENT 'Log index of the change',
  tx_hash String COMMENT 'Transaction hash of the change',
  old_rate UInt32 COMMENT 'Rate before, units of 1/rate_scale',
  new_rate UInt32 COMMENT 'Rate from valid_from, units of 1/rate_scale',
  rate_scale UInt32 COMMENT '10000 (bps) or 1000000',
  rate Float64 COMMENT 'new_rate / rate_scale: the fee as a fraction (0.005 = 0.5%; a yearly rate for MANAGEMENT and PLATFORM)',
  old_flat UInt256 COMMENT 'Flat fee before, raw asset units (NestVault; 0 otherwise)',
  new_flat UInt256 COMMENT 'Flat fee from valid_from, raw asset units (NestVault; 0 otherwise)'
) AS
SELECT toString(vault) AS vault, chain_id, contract, toString(kind) AS kind, toString(event) AS event,
  block_time AS valid_from,
  leadInFrame(toNullable(block_time), 1, NULL) OVER (
    PARTITION BY vault, chain_id, contract, kind ORDER BY block_number, log_index
    ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING
  ) AS valid_to,
  block_number, log_index, tx_hash, old_rate, new_rate, rate_scale, new_rate / rate_scale AS rate, old_flat, new_flat
FROM {{db}}.fee_rates_raw FINAL WHERE removed = 0
COMMENT 'Fee-rate history per vault and chain: every setting change of each (contract, kind) with the interval it was in force; the current setting has valid_to NULL';
