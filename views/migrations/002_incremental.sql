-- Incremental materialized views: pre-aggregated state updated on every insert.
-- They sum signed deltas (a retraction contributes the negative of its event), so the
-- consumer inserts each state change of an event exactly once (see streams/dedup.ts).

CREATE TABLE IF NOT EXISTS {{db}}.balance_deltas {{on_cluster}} (
  vault LowCardinality(String) COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain id; 101 for Solana',
  holder String COMMENT 'Holder address',
  token SimpleAggregateFunction(any, String) COMMENT 'Share token address or Solana mint',
  delta SimpleAggregateFunction(sum, Int256) COMMENT 'Net balance change, raw units (sum to get the balance)',
  last_change SimpleAggregateFunction(max, DateTime('UTC')) COMMENT 'Latest block time touching this balance'
) ENGINE = AggregatingMergeTree
ORDER BY (vault, chain_id, holder)
SETTINGS non_replicated_deduplication_window = 1000
COMMENT 'Current share balance per (vault, chain, holder) as summable deltas; read through the balances view';

CREATE MATERIALIZED VIEW IF NOT EXISTS {{db}}.balance_deltas_mv {{on_cluster}} TO {{db}}.balance_deltas AS
SELECT vault, chain_id, side.1 AS holder, token, side.2 * if(removed = 1, -1, 1) AS delta, block_time AS last_change
FROM {{db}}.transfers_raw
ARRAY JOIN [(from_address, -toInt256(amount)), (to_address, toInt256(amount))] AS side
WHERE side.1 NOT IN ('0x0000000000000000000000000000000000000000', '11111111111111111111111111111111');

CREATE TABLE IF NOT EXISTS {{db}}.holder_deltas_hourly {{on_cluster}} (
  vault LowCardinality(String) COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain id',
  holder String COMMENT 'Holder address',
  hour DateTime('UTC') COMMENT 'Start of the UTC hour',
  delta Int256 COMMENT 'Net balance change of the holder within the hour, raw units'
) ENGINE = SummingMergeTree(delta)
ORDER BY (vault, chain_id, holder, hour)
SETTINGS non_replicated_deduplication_window = 1000
COMMENT 'Per-holder balance change per hour: the input of hourly and daily holder counts';

CREATE MATERIALIZED VIEW IF NOT EXISTS {{db}}.holder_deltas_hourly_mv {{on_cluster}} TO {{db}}.holder_deltas_hourly AS
SELECT vault, chain_id, side.1 AS holder, toStartOfHour(block_time) AS hour, side.2 * if(removed = 1, -1, 1) AS delta
FROM {{db}}.transfers_raw
ARRAY JOIN [(from_address, -toInt256(amount)), (to_address, toInt256(amount))] AS side
WHERE side.1 NOT IN ('0x0000000000000000000000000000000000000000', '11111111111111111111111111111111');

CREATE TABLE IF NOT EXISTS {{db}}.supply_deltas_daily {{on_cluster}} (
  vault LowCardinality(String) COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain id',
  day Date COMMENT 'UTC day',
  delta Int256 COMMENT 'Shares minted minus burned on the chain that day, raw units'
) ENGINE = SummingMergeTree(delta)
ORDER BY (vault, chain_id, day)
SETTINGS non_replicated_deduplication_window = 1000
COMMENT 'Share supply change per chain and UTC day (mints minus burns)';

CREATE MATERIALIZED VIEW IF NOT EXISTS {{db}}.supply_deltas_daily_mv {{on_cluster}} TO {{db}}.supply_deltas_daily AS
SELECT vault, chain_id, toDate(block_time) AS day,
  (if(from_address IN ('0x0000000000000000000000000000000000000000', '11111111111111111111111111111111'), toInt256(amount), toInt256(0))
   - if(to_address IN ('0x0000000000000000000000000000000000000000', '11111111111111111111111111111111'), toInt256(amount), toInt256(0)))
   * if(removed = 1, -1, 1) AS delta
FROM {{db}}.transfers_raw;

CREATE TABLE IF NOT EXISTS {{db}}.fees_daily_sums {{on_cluster}} (
  vault LowCardinality(String) COMMENT 'Vault slug',
  day Date COMMENT 'UTC day',
  kind LowCardinality(String) COMMENT 'Fee kind',
  usd_e18 Int256 COMMENT 'USD value in units of 1e-18 USD'
) ENGINE = SummingMergeTree(usd_e18)
ORDER BY (vault, day, kind)
SETTINGS non_replicated_deduplication_window = 1000
COMMENT 'Fees per vault, UTC day and kind in exact 1e-18 USD units';

CREATE MATERIALIZED VIEW IF NOT EXISTS {{db}}.fees_daily_sums_mv {{on_cluster}} TO {{db}}.fees_daily_sums AS
SELECT vault, toDate(block_time) AS day, kind, usd_e18 * if(removed = 1, -1, 1) AS usd_e18
FROM {{db}}.fees_raw;

CREATE TABLE IF NOT EXISTS {{db}}.mint_state_agg {{on_cluster}} (
  signature String COMMENT 'Solana signature of the flow',
  step LowCardinality(String) COMMENT 'Step name',
  status AggregateFunction(argMax, String, DateTime64(3, 'UTC')) COMMENT 'Latest status',
  fields AggregateFunction(argMax, Map(String, String), DateTime64(3, 'UTC')) COMMENT 'Latest fields',
  error AggregateFunction(argMax, String, DateTime64(3, 'UTC')) COMMENT 'Latest error',
  first_seen SimpleAggregateFunction(min, DateTime64(3, 'UTC')) COMMENT 'First observation',
  last_seen SimpleAggregateFunction(max, DateTime64(3, 'UTC')) COMMENT 'Latest observation'
) ENGINE = AggregatingMergeTree
ORDER BY (signature, step)
SETTINGS non_replicated_deduplication_window = 1000
COMMENT 'Latest observation of each mint-flow step (argMax states: idempotent under duplicates)';

CREATE MATERIALIZED VIEW IF NOT EXISTS {{db}}.mint_state_agg_mv {{on_cluster}} TO {{db}}.mint_state_agg AS
SELECT signature, step, argMaxState(toString(status), observed_at) AS status, argMaxState(fields, observed_at) AS fields,
  argMaxState(error, observed_at) AS error, min(observed_at) AS first_seen, max(observed_at) AS last_seen
FROM {{db}}.mint_steps_raw
GROUP BY signature, step;
