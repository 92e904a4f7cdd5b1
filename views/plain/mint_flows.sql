-- Solana mint flows, one row per signature, with the overall status of
-- docs/architecture.md#endpoint-semantics (api/read/mint-status.ts: refunded once the reclaim
-- completed, failed on any failed step, completed when every applicable step is, pending when
-- none started, else processing).
CREATE OR REPLACE VIEW {{db}}.mint_flows {{on_cluster}} (
  signature String COMMENT 'Solana signature that started the flow',
  vault String COMMENT 'Vault slug of the flow (the solana step''s vault field; empty until that step is seen)',
  wallet String COMMENT 'Solana wallet that burned the USDC (the solana step''s wallet field)',
  amount UInt256 COMMENT 'USDC burned on Solana, raw units (the solana step''s amount field; 0 until seen)',
  current_step String COMMENT 'The first applicable step not completed (pending, in progress or failed); empty once the flow is completed or refunded',
  step_statuses Map(String, String) COMMENT 'Status of each of the eight steps (pending when not observed yet)',
  overall_status String COMMENT 'pending, processing, completed, failed or refunded',
  completed_steps UInt64 COMMENT 'Applicable steps completed',
  applicable_steps UInt64 COMMENT 'Steps that apply: not skipped; the reclaim only once a refund is under way',
  progress String COMMENT 'completed_steps/applicable_steps, e.g. 5/7',
  created_at DateTime64(3, 'UTC') COMMENT 'First observation of any step, UTC',
  updated_at DateTime64(3, 'UTC') COMMENT 'Latest observation of any step, UTC'
) AS
SELECT signature, sf['vault'] AS vault, sf['wallet'] AS wallet, toUInt256OrZero(sf['amount']) AS amount,
  if(overall_status IN ('completed', 'refunded'), '',
    arrayFirst((n, s) -> s NOT IN ('completed', 'skipped') AND NOT (n = 'reclaim' AND s = 'pending'), names, statuses)) AS current_step,
  mapFromArrays(names, statuses) AS step_statuses,
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
    argMaxIf(fields, last_seen, step = 'solana') AS sf,
    CAST(min(first_seen) AS DateTime64(3, 'UTC')) AS created_at, CAST(max(last_seen) AS DateTime64(3, 'UTC')) AS updated_at
  FROM {{db}}.mint_state GROUP BY signature
)
COMMENT 'One row per Solana mint flow: vault, wallet, amount, the current step, step statuses, overall status and progress as /solana/mint-status reports them';
