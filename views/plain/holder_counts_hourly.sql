-- An hour whose changes net to zero for a holder is left out (HAVING d != 0): it changes no count,
-- and the summing table keeps it only until its parts merge, so the first sample (the hour of the
-- first non-zero change) does not depend on when they merge.
CREATE OR REPLACE VIEW {{db}}.holder_counts_hourly {{on_cluster}} AS
WITH
  per_hour AS (
    SELECT vault, chain_id, holder, hour, sum(delta) AS d FROM {{db}}.holder_deltas_hourly
    GROUP BY vault, chain_id, holder, hour HAVING d != 0
  ),
  running AS (
    SELECT vault, chain_id, holder, hour,
      sum(d) OVER (PARTITION BY vault, chain_id, holder ORDER BY hour ROWS UNBOUNDED PRECEDING) > 0 AS pos
    FROM per_hour
  ),
  flips AS (
    SELECT vault, chain_id, hour,
      toInt64(pos) - toInt64(lagInFrame(pos, 1, false) OVER (PARTITION BY vault, chain_id, holder ORDER BY hour
        ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)) AS change
    FROM running
  ),
  counts AS (
    SELECT vault, chain_id, toUInt32(hour) AS hn,
      sum(sum(change)) OVER (PARTITION BY vault, chain_id ORDER BY hn ROWS UNBOUNDED PRECEDING) AS holders
    FROM flips GROUP BY vault, chain_id, hn
  ),
  grid AS (
    SELECT vault, chain_id,
      arrayJoin(range(min(hn), toUInt32(toStartOfHour(now('UTC'))), 3600)) AS hn
    FROM counts GROUP BY vault, chain_id
  )
SELECT g.vault AS vault, g.chain_id AS chain_id, toDateTime(g.hn, 'UTC') AS hour, c.holders AS holders
FROM grid AS g ASOF LEFT JOIN counts AS c ON g.vault = c.vault AND g.chain_id = c.chain_id AND g.hn >= c.hn
COMMENT 'Holder count per (vault, chain) sampled at the end of every ended UTC hour (hour = start of the hour)';
ALTER TABLE {{db}}.holder_counts_hourly {{on_cluster}} COMMENT COLUMN vault 'Vault slug';
ALTER TABLE {{db}}.holder_counts_hourly {{on_cluster}} COMMENT COLUMN chain_id 'Chain id; 101 for Solana';
ALTER TABLE {{db}}.holder_counts_hourly {{on_cluster}} COMMENT COLUMN hour 'Start of the UTC hour; the count is taken at its end';
ALTER TABLE {{db}}.holder_counts_hourly {{on_cluster}} COMMENT COLUMN holders 'Addresses with a positive balance at the end of the hour';
