-- Read views for the API, the data team and BI. Retracted events never appear here.
-- Raw amounts stay exact (UInt256/Int256 raw units); *_float columns are conveniences.

CREATE VIEW IF NOT EXISTS {{db}}.vault_registry {{on_cluster}} AS
SELECT slug, status, updated_at, vault_address, name, symbol, decimals, chain_ids, solana_mint,
  base_asset_usd_price, base_asset_decimals, info
FROM {{db}}.registry_raw FINAL
COMMENT 'Latest registry entry per vault slug';

CREATE VIEW IF NOT EXISTS {{db}}.chain_watermarks {{on_cluster}} AS
SELECT chain_id, max(block_number) AS block_number, max(block_time) AS block_time, count() AS blocks_seen
FROM {{db}}.blocks_raw FINAL
WHERE removed = 0
GROUP BY chain_id
COMMENT 'Per chain: the newest ingested block and its time (a UTC day is settled for a chain once block_time is past its end)';

CREATE VIEW IF NOT EXISTS {{db}}.transfers {{on_cluster}} AS
SELECT * EXCEPT (ver, removed) FROM {{db}}.transfers_raw FINAL WHERE removed = 0
COMMENT 'Share-token transfers currently on the canonical chain';

CREATE VIEW IF NOT EXISTS {{db}}.transactions {{on_cluster}} AS
SELECT * EXCEPT (ver, removed) FROM {{db}}.activity_raw FINAL WHERE removed = 0
COMMENT 'Deposits, withdrawals, redeem requests, instant redemptions and bridge moves on the canonical chain';

CREATE VIEW IF NOT EXISTS {{db}}.rates {{on_cluster}} AS
SELECT * EXCEPT (ver, removed) FROM {{db}}.rates_raw FINAL WHERE removed = 0
COMMENT 'Exchange-rate updates and reads on the canonical chain';

CREATE VIEW IF NOT EXISTS {{db}}.fees {{on_cluster}} AS
SELECT * EXCEPT (ver, removed) FROM {{db}}.fees_raw FINAL WHERE removed = 0
COMMENT 'Fee accruals and claims on the canonical chain';

CREATE VIEW IF NOT EXISTS {{db}}.role_updates {{on_cluster}} AS
SELECT * EXCEPT (ver, removed) FROM {{db}}.roles_raw FINAL WHERE removed = 0
COMMENT 'UserRoleUpdated events on the canonical chain';

CREATE VIEW IF NOT EXISTS {{db}}.balances {{on_cluster}} AS
SELECT b.vault AS vault, b.chain_id AS chain_id, b.holder AS holder, b.token AS token, b.balance_raw AS balance_raw,
  r.decimals AS decimals, b.balance_raw / exp10(r.decimals) AS balance_float, b.last_change AS last_change
FROM (
  SELECT vault, chain_id, holder, any(token) AS token, sum(delta) AS balance_raw, max(last_change) AS last_change
  FROM {{db}}.balance_deltas GROUP BY vault, chain_id, holder HAVING balance_raw != 0
) AS b
LEFT JOIN {{db}}.vault_registry AS r ON r.slug = b.vault
COMMENT 'Current non-zero share balance per (vault, chain, holder); balance_raw in raw token units';

CREATE VIEW IF NOT EXISTS {{db}}.vault_holders {{on_cluster}} AS
SELECT vault, uniqExact(holder) AS holders, count() AS holder_positions
FROM {{db}}.balances WHERE balance_raw > 0 GROUP BY vault
COMMENT 'Holders per vault: distinct addresses with a positive balance on any chain';

CREATE VIEW IF NOT EXISTS {{db}}.holder_counts_hourly {{on_cluster}} AS
WITH
  per_hour AS (
    SELECT vault, chain_id, holder, hour, sum(delta) AS d FROM {{db}}.holder_deltas_hourly
    GROUP BY vault, chain_id, holder, hour
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

CREATE VIEW IF NOT EXISTS {{db}}.holder_counts_daily {{on_cluster}} AS
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

CREATE VIEW IF NOT EXISTS {{db}}.price_daily {{on_cluster}} AS
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

CREATE VIEW IF NOT EXISTS {{db}}.supply_daily {{on_cluster}} AS
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

CREATE VIEW IF NOT EXISTS {{db}}.vault_daily {{on_cluster}} AS
SELECT s.vault AS vault, s.chain_id AS chain_id, s.day AS day, s.supply_raw AS supply_raw, r.decimals AS decimals,
  p.close_rate AS close_rate, p.rate_decimals AS rate_decimals, p.price_float AS price_float,
  r.base_asset_usd_price AS base_asset_usd_price,
  (s.supply_raw / exp10(r.decimals)) * p.price_float * toFloat64(r.base_asset_usd_price) AS tvl_usd_float
FROM {{db}}.supply_daily AS s
LEFT JOIN {{db}}.vault_registry AS r ON r.slug = s.vault
LEFT JOIN (
  SELECT vault, day, argMax(close_rate, rate_updated_at) AS close_rate, any(rate_decimals) AS rate_decimals,
    argMax(price_float, rate_updated_at) AS price_float
  FROM {{db}}.price_daily GROUP BY vault, day
) AS p ON p.vault = s.vault AND p.day = s.day
COMMENT 'Per (vault, chain, UTC day): supply, the vault close price (latest rate of any chain that day) and TVL in USD';

CREATE VIEW IF NOT EXISTS {{db}}.fees_daily {{on_cluster}} AS
SELECT vault, day, kind, total AS usd_e18, total / 1e18 AS usd_float
FROM (SELECT vault, day, kind, sum(usd_e18) AS total FROM {{db}}.fees_daily_sums GROUP BY vault, day, kind)
WHERE total != 0
COMMENT 'Fees per vault, UTC day and kind: usd_e18 exact in 1e-18 USD';

CREATE VIEW IF NOT EXISTS {{db}}.redemption_requests {{on_cluster}} AS
SELECT vault, chain_id, queue, request_id,
  argMaxIf(amount, (block_number, log_index), kind = 'REQUEST') AS amount,
  argMaxIf(min_price, (block_number, log_index), kind = 'REQUEST') AS min_price,
  argMaxIf(deadline, (block_number, log_index), kind = 'REQUEST') AS deadline,
  argMaxIf(block_time, (block_number, log_index), kind = 'REQUEST') AS requested_at,
  argMaxIf(tx_hash, (block_number, log_index), kind = 'REQUEST') AS request_tx_hash,
  any(user) AS user, any(offer_token) AS offer_token, any(want_token) AS want_token, any(want_decimals) AS want_decimals,
  maxIf((block_number, log_index), kind = 'REQUEST') AS last_request_pos,
  maxIf((block_number, log_index), kind = 'FILL') AS last_fill_pos,
  maxIf((block_number, log_index), kind = 'CANCEL') AS last_cancel_pos,
  multiIf(last_cancel_pos > last_request_pos, 'cancelled', last_fill_pos > last_request_pos, 'filled',
    amount = 0, 'cancelled', deadline <= now('UTC'), 'expired', 'open') AS state
FROM {{db}}.redemptions_raw FINAL WHERE removed = 0
GROUP BY vault, chain_id, queue, request_id
COMMENT 'Latest state of each redemption request: open, filled, cancelled or expired (deadline passed, unfilled)';

CREATE VIEW IF NOT EXISTS {{db}}.role_assignments {{on_cluster}} AS
SELECT vault, chain_id, authority, user, role,
  argMax(enabled, (block_number, log_index)) AS enabled, max(block_time) AS updated_at
FROM {{db}}.roles_raw FINAL WHERE removed = 0
GROUP BY vault, chain_id, authority, user, role
COMMENT 'Latest role state per (vault, chain, user, role)';

CREATE VIEW IF NOT EXISTS {{db}}.mint_state {{on_cluster}} AS
SELECT signature, step, argMaxMerge(status) AS status, argMaxMerge(fields) AS fields, argMaxMerge(error) AS error,
  min(first_seen) AS first_seen, max(last_seen) AS last_seen
FROM {{db}}.mint_state_agg GROUP BY signature, step
COMMENT 'Latest state of every step of every tracked Solana mint flow';

CREATE VIEW IF NOT EXISTS {{db}}.source_errors {{on_cluster}} AS
SELECT vault, chain_id, source, operation, message, code, ts FROM {{db}}.source_errors_raw FINAL
COMMENT 'Data-source failures per vault';

CREATE VIEW IF NOT EXISTS {{db}}.snapshots_latest {{on_cluster}} AS
SELECT vault, kind, chain_id, token, s.1 AS ts, s.2 AS amount, s.3 AS decimals, s.4 AS usd_price, s.5 AS apy7d,
  s.6 AS apy30d, s.7 AS weight, s.8 AS is_paused
FROM (
  SELECT vault, kind, chain_id, token,
    argMax((ts, amount, decimals, usd_price, apy7d, apy30d, weight, is_paused), ts) AS s
  FROM {{db}}.snapshots_raw FINAL GROUP BY vault, kind, chain_id, token
)
COMMENT 'Latest state snapshot per (vault, kind, chain, token)';
