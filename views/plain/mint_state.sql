CREATE OR REPLACE VIEW {{db}}.mint_state {{on_cluster}} AS
SELECT signature, step, argMaxMerge(status) AS status, argMaxMerge(fields) AS fields, argMaxMerge(error) AS error,
  min(first_seen) AS first_seen, max(last_seen) AS last_seen
FROM {{db}}.mint_state_agg GROUP BY signature, step
COMMENT 'Latest state of every step of every tracked Solana mint flow';
ALTER TABLE {{db}}.mint_state {{on_cluster}} COMMENT COLUMN signature 'Solana signature that started the flow';
ALTER TABLE {{db}}.mint_state {{on_cluster}} COMMENT COLUMN step 'Step name: solana, cctpAttestation, predicate, relay, composer, oft, solanaMint, reclaim';
ALTER TABLE {{db}}.mint_state {{on_cluster}} COMMENT COLUMN status 'Latest status: pending, in_progress, completed, failed, skipped';
ALTER TABLE {{db}}.mint_state {{on_cluster}} COMMENT COLUMN fields 'Latest fields of the step, as strings';
ALTER TABLE {{db}}.mint_state {{on_cluster}} COMMENT COLUMN error 'Latest error message, empty when none';
ALTER TABLE {{db}}.mint_state {{on_cluster}} COMMENT COLUMN first_seen 'First observation of the step, UTC (ms)';
ALTER TABLE {{db}}.mint_state {{on_cluster}} COMMENT COLUMN last_seen 'Latest observation of the step, UTC (ms)';
