CREATE OR REPLACE VIEW {{db}}.vault_operators {{on_cluster}} (
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
  SELECT CAST(vault, 'String') AS vault, chain_id, CAST(source, 'String') AS source, contract, controller, operator,
    argMax(approved, (block_number, log_index)) AS state, max(block_time) AS changed_at
  FROM {{db}}.operators_raw FINAL WHERE removed = 0
  GROUP BY vault, chain_id, source, contract, controller, operator
)
GROUP BY vault, chain_id, controller, operator
COMMENT 'Current operators per vault and chain: the latest OperatorSet state per (vault, chain, controller, operator), revoked pairs kept with approved = 0; auto-claim is on when the chain''s RedeemOperator is approved';
