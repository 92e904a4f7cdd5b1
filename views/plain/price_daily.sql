CREATE OR REPLACE VIEW {{db}}.price_daily {{on_cluster}} AS
WITH
  closes AS (
    SELECT vault, chain_id, toUInt32(toDate(block_time)) AS dn,
      argMax(rate, (block_time, block_number, log_index)) AS close_rate,
      argMax(rate_decimals, (block_time, block_number, log_index)) AS rate_decimals,
      argMax(is_paused, (block_time, block_number, log_index)) AS is_paused,
      max(block_time) AS updated_at
    FROM {{db}}.rates_raw FINAL WHERE removed = 0
    GROUP BY vault, chain_id, dn
  ),
  grid AS (
    SELECT vault, chain_id, arrayJoin(range(min(dn), toUInt32(today()) + 1)) AS dn FROM closes GROUP BY vault, chain_id
  )
SELECT g.vault AS vault, g.chain_id AS chain_id, addDays(toDate('1970-01-01'), g.dn) AS day,
  c.close_rate AS close_rate, c.rate_decimals AS rate_decimals, c.close_rate / exp10(c.rate_decimals) AS price_float,
  c.is_paused AS is_paused, c.updated_at AS rate_updated_at
FROM grid AS g ASOF LEFT JOIN closes AS c ON g.vault = c.vault AND g.chain_id = c.chain_id AND g.dn >= c.dn
COMMENT 'Close share price per (vault, chain, UTC day): the last rate at or before the end of the day, carried forward over days without updates; close_rate in base-asset raw units';
ALTER TABLE {{db}}.price_daily {{on_cluster}} COMMENT COLUMN vault 'Vault slug';
ALTER TABLE {{db}}.price_daily {{on_cluster}} COMMENT COLUMN chain_id 'Chain id of the accountant';
ALTER TABLE {{db}}.price_daily {{on_cluster}} COMMENT COLUMN day 'UTC day (from the first rate on the chain to today)';
ALTER TABLE {{db}}.price_daily {{on_cluster}} COMMENT COLUMN close_rate 'Last rate at or before the end of the day (carried forward), base-asset raw units';
ALTER TABLE {{db}}.price_daily {{on_cluster}} COMMENT COLUMN rate_decimals 'Decimals of close_rate';
ALTER TABLE {{db}}.price_daily {{on_cluster}} COMMENT COLUMN price_float 'close_rate / 10^rate_decimals: share price in the base asset (convenience; exact: price_close_daily.price_e18)';
ALTER TABLE {{db}}.price_daily {{on_cluster}} COMMENT COLUMN is_paused '1 when the accountant reported paused with the close';
ALTER TABLE {{db}}.price_daily {{on_cluster}} COMMENT COLUMN rate_updated_at 'Block time of the latest rate on or before the day, UTC';
