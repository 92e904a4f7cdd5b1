CREATE OR REPLACE VIEW {{db}}.snapshots_latest {{on_cluster}} AS
SELECT vault, kind, chain_id, token, s.1 AS ts, s.2 AS amount, s.3 AS decimals, s.4 AS usd_price, s.5 AS apy7d,
  s.6 AS apy30d, s.7 AS weight, s.8 AS is_paused
FROM (
  SELECT vault, kind, chain_id, token,
    argMax((ts, amount, decimals, usd_price, apy7d, apy30d, weight, is_paused), ts) AS s
  FROM {{db}}.snapshots_raw FINAL GROUP BY vault, kind, chain_id, token
)
COMMENT 'Latest state snapshot per (vault, kind, chain, token)';
ALTER TABLE {{db}}.snapshots_latest {{on_cluster}} COMMENT COLUMN vault 'Vault slug';
ALTER TABLE {{db}}.snapshots_latest {{on_cluster}} COMMENT COLUMN kind 'SUPPLY, ASSET_BALANCE, ASSET_PRICE, COMPOSITION or ACCOUNTANT';
ALTER TABLE {{db}}.snapshots_latest {{on_cluster}} COMMENT COLUMN chain_id 'Chain read (0 when not chain-specific)';
ALTER TABLE {{db}}.snapshots_latest {{on_cluster}} COMMENT COLUMN token 'Token address, or the targetComposition slug for COMPOSITION';
ALTER TABLE {{db}}.snapshots_latest {{on_cluster}} COMMENT COLUMN ts 'Time of the latest read, UTC';
ALTER TABLE {{db}}.snapshots_latest {{on_cluster}} COMMENT COLUMN amount 'Supply or balance, raw units';
ALTER TABLE {{db}}.snapshots_latest {{on_cluster}} COMMENT COLUMN decimals 'Decimals of amount';
ALTER TABLE {{db}}.snapshots_latest {{on_cluster}} COMMENT COLUMN usd_price 'USD price (null when not read)';
ALTER TABLE {{db}}.snapshots_latest {{on_cluster}} COMMENT COLUMN apy7d 'Asset 7-day APY, percent';
ALTER TABLE {{db}}.snapshots_latest {{on_cluster}} COMMENT COLUMN apy30d 'Asset 30-day APY, percent';
ALTER TABLE {{db}}.snapshots_latest {{on_cluster}} COMMENT COLUMN weight 'Composition weight, percent';
ALTER TABLE {{db}}.snapshots_latest {{on_cluster}} COMMENT COLUMN is_paused 'Accountant paused (ACCOUNTANT snapshots)';
