CREATE OR REPLACE VIEW {{db}}.fee_rate_history {{on_cluster}} (
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
SELECT CAST(vault, 'String') AS vault, chain_id, contract, CAST(kind, 'String') AS kind, CAST(event, 'String') AS event,
  block_time AS valid_from,
  leadInFrame(toNullable(block_time), 1, NULL) OVER (
    PARTITION BY vault, chain_id, contract, kind ORDER BY block_number, log_index
    ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING
  ) AS valid_to,
  block_number, log_index, tx_hash, old_rate, new_rate, rate_scale, new_rate / rate_scale AS rate, old_flat, new_flat
FROM {{db}}.fee_rates_raw FINAL WHERE removed = 0
COMMENT 'Fee-rate history per vault and chain: every setting change of each (contract, kind) with the interval it was in force; the current setting has valid_to NULL';
