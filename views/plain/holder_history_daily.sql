-- Holder history (docs/architecture.md#endpoint-semantics), the one daily holder-count view.
-- holder_counts_hourly starts a (vault, chain)'s samples at the hour of its first non-zero change; this
-- view counts the hours of that first day before it as samples of 0, so every past day has 24
-- samples and its min/average include them.
CREATE OR REPLACE VIEW {{db}}.holder_history_daily {{on_cluster}} AS
SELECT vault, chain_id, day, start, end,
  if(lead_in > 0, least(lowest, 0), lowest) AS min, highest AS max,
  total / (samples + lead_in) AS average, samples + lead_in AS count
FROM (
  SELECT vault, chain_id, toDate(hour) AS day,
    argMin(prev, hour) AS start, argMax(holders, hour) AS end,
    min(holders) AS lowest, max(holders) AS highest, sum(holders) AS total, count() AS samples,
    -- Hours of the day before its first sample: only the first day of a (vault, chain) has any.
    toUInt64(dateDiff('hour', toStartOfDay(min(hour)), min(hour))) AS lead_in
  FROM (
    SELECT vault, chain_id, hour, holders,
      lagInFrame(holders, 1, 0) OVER (PARTITION BY vault, chain_id ORDER BY hour ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS prev
    FROM {{db}}.holder_counts_hourly
  )
  GROUP BY vault, chain_id, day
)
COMMENT 'Per (vault, chain, UTC day): holder count at 00:00 (start), at the last ended hour (end), min/max/average over the samples taken at the end of every ended hour of the day (hours before the first transfer count as 0) and their number (count, 24 for a past day)';
ALTER TABLE {{db}}.holder_history_daily {{on_cluster}} COMMENT COLUMN vault 'Vault slug';
ALTER TABLE {{db}}.holder_history_daily {{on_cluster}} COMMENT COLUMN chain_id 'Chain id; 101 for Solana';
ALTER TABLE {{db}}.holder_history_daily {{on_cluster}} COMMENT COLUMN day 'UTC day';
ALTER TABLE {{db}}.holder_history_daily {{on_cluster}} COMMENT COLUMN start 'Holder count at 00:00, addresses';
ALTER TABLE {{db}}.holder_history_daily {{on_cluster}} COMMENT COLUMN end 'Holder count at the end of the last ended hour of the day, addresses';
ALTER TABLE {{db}}.holder_history_daily {{on_cluster}} COMMENT COLUMN min 'Lowest hourly sample (hours before the first transfer count as 0), addresses';
ALTER TABLE {{db}}.holder_history_daily {{on_cluster}} COMMENT COLUMN max 'Highest hourly sample, addresses';
ALTER TABLE {{db}}.holder_history_daily {{on_cluster}} COMMENT COLUMN average 'Mean of the hourly samples, addresses';
ALTER TABLE {{db}}.holder_history_daily {{on_cluster}} COMMENT COLUMN count 'Number of hourly samples (24 for a past day)';
