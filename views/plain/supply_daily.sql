CREATE OR REPLACE VIEW {{db}}.supply_daily {{on_cluster}} AS
WITH
  changes AS (
    SELECT vault, chain_id, toUInt32(day) AS dn,
      sum(sum(delta)) OVER (PARTITION BY vault, chain_id ORDER BY dn ROWS UNBOUNDED PRECEDING) AS supply
    FROM {{db}}.supply_deltas_daily GROUP BY vault, chain_id, dn
  ),
  grid AS (
    SELECT vault, chain_id, arrayJoin(range(min(dn), toUInt32(today()) + 1)) AS dn FROM changes GROUP BY vault, chain_id
  )
SELECT g.vault AS vault, g.chain_id AS chain_id, addDays(toDate('1970-01-01'), g.dn) AS day, c.supply AS supply_raw
FROM grid AS g ASOF LEFT JOIN changes AS c ON g.vault = c.vault AND g.chain_id = c.chain_id AND g.dn >= c.dn
COMMENT 'Share supply per (vault, chain) at the end of each UTC day, raw units (mints minus burns)';
ALTER TABLE {{db}}.supply_daily {{on_cluster}} COMMENT COLUMN vault 'Vault slug';
ALTER TABLE {{db}}.supply_daily {{on_cluster}} COMMENT COLUMN chain_id 'Chain id; 101 for Solana';
ALTER TABLE {{db}}.supply_daily {{on_cluster}} COMMENT COLUMN day 'UTC day (from the first mint or burn on the chain to today)';
ALTER TABLE {{db}}.supply_daily {{on_cluster}} COMMENT COLUMN supply_raw 'Share supply at the end of the day, raw units (mints minus burns)';
