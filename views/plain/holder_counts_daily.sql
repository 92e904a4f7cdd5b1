CREATE OR REPLACE VIEW {{db}}.holder_counts_daily {{on_cluster}} AS
SELECT vault, chain_id, toDate(hour) AS day,
  argMin(prev, hour) AS start, argMax(holders, hour) AS end,
  min(holders) AS min, max(holders) AS max, avg(holders) AS average, count() AS count
FROM (
  SELECT vault, chain_id, hour, holders,
    lagInFrame(holders, 1, 0) OVER (PARTITION BY vault, chain_id ORDER BY hour ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS prev
  FROM {{db}}.holder_counts_hourly
)
GROUP BY vault, chain_id, day
COMMENT 'Per (vault, chain, UTC day): holder count at 00:00 (start), at the last hourly sample (end), min/max/average over the hourly samples and their count (24 for a past day)';
ALTER TABLE {{db}}.holder_counts_daily {{on_cluster}} COMMENT COLUMN vault 'Vault slug';
ALTER TABLE {{db}}.holder_counts_daily {{on_cluster}} COMMENT COLUMN chain_id 'Chain id; 101 for Solana';
ALTER TABLE {{db}}.holder_counts_daily {{on_cluster}} COMMENT COLUMN day 'UTC day';
ALTER TABLE {{db}}.holder_counts_daily {{on_cluster}} COMMENT COLUMN start 'Holder count at 00:00 (the sample of the previous hour), addresses';
ALTER TABLE {{db}}.holder_counts_daily {{on_cluster}} COMMENT COLUMN end 'Holder count at the last hourly sample of the day, addresses';
ALTER TABLE {{db}}.holder_counts_daily {{on_cluster}} COMMENT COLUMN min 'Lowest hourly sample of the day (from the first transfer on: see holder_history_daily), addresses';
ALTER TABLE {{db}}.holder_counts_daily {{on_cluster}} COMMENT COLUMN max 'Highest hourly sample of the day, addresses';
ALTER TABLE {{db}}.holder_counts_daily {{on_cluster}} COMMENT COLUMN average 'Mean of the hourly samples, addresses';
ALTER TABLE {{db}}.holder_counts_daily {{on_cluster}} COMMENT COLUMN count 'Number of hourly samples of the day';
